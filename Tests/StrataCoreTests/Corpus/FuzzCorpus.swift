/// Fuzz inputs that once crashed, hung or misbehaved, kept as regression tests. Each is a recipe
/// (base store + mutation seed, see `FuzzMutator`), replayed by `FuzzTests.corpusReplays` before
/// the random inputs. Add an entry whenever the fuzzer finds something: the failing test prints the
/// recipe to paste here.
let fuzzRegressionCorpus: [(recipe: FuzzRecipe, note: String)] = [
    (FuzzRecipe(base: .multi, seed: 13240474797711798063),
     "free-tree record forged to UInt64.max entries: insert's `record.entries += 1` overflowed (TreeInsert.swift:85)"),
    (FuzzRecipe(base: .multi, seed: 8627401555371006477),
     "free-tree record forged to 0 entries: remove's `record.entries -= 1` underflowed (TreeDelete.swift:19)"),
    (FuzzRecipe(base: .small, seed: 5055554164407564145),
     "catalog record forged to UInt64.max entries: creating a tree overflowed the catalog's entry count"),
    (FuzzRecipe(base: .multi, seed: 16852234072815539150),
     "leaf header `upper` forged inside the page: reserveNode's precondition trapped (PageBuffer.swift:95)"),
    (FuzzRecipe(base: .multi, seed: 7242394770928530070),
     "free tree emptied in the meta plus forged overflow run: reserveNode's precondition trapped (PageBuffer.swift:95)"),
    (FuzzRecipe(base: .small, seed: 10798765254903393673),
     "catalog record of tree 't' pointing at the catalog's own page, upper forged: SIGSEGV in touchPath (TreeInsert.swift:34)"),
    (FuzzRecipe(base: .small, seed: 18204758222559466593),
     "leaf header `upper` forged to 4095 with stale checksums: SIGABRT (heap corruption) while writing"),
    (FuzzRecipe(base: .multi, seed: 9044467443324150456),
     "branch header `upper` forged to 4095 plus bit flips: SIGSEGV while writing"),
    (FuzzRecipe(base: .multi, seed: 15283615759321754068),
     "catalog record's entry count above Int.max: `count(_:)` trapped converting it (Transaction.swift:118), a read"),
]
