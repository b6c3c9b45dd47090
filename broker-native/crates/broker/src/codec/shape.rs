//! The types that describe a request's wire layout: what `shapes` lists
//! for each request and what `bounds` walks a body against.

/// A request's wire layout at all its versions.
pub(crate) struct Shape {
    pub api_key: i16,
    pub versions: (i16, i16),
    /// The first flexible version (compact encodings, tagged fields).
    pub flexible_from: i16,
    pub fields: &'static [Field],
}

/// One field of a request or of a struct inside it.
pub(crate) struct Field {
    /// The versions the field is present in (inclusive).
    pub versions: (i16, i16),
    /// Its tag when it is a tagged field (flexible versions only), else -1.
    pub tag: i32,
    pub ty: Ty,
}

/// A field's wire type.
pub(crate) enum Ty {
    /// Fixed width: bool, int8 .. int64, float64, uuid.
    Fixed(u8),
    /// A string: i16 length, or an unsigned varint length + 1 when flexible.
    Str,
    /// Bytes or records: i32 length, or an unsigned varint length + 1.
    Bytes,
    /// An array: i32 count, or an unsigned varint count + 1.
    Array(&'static Ty),
    Struct(&'static [Field]),
}
