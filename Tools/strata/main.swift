// strata: the command-line tool for Strata stores. See Tools/strata/README.md and `strata help`.
import Glibc

exit(await Tool.main(Array(CommandLine.arguments.dropFirst())))
