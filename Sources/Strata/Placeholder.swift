public enum StrataPlaceholder {}
