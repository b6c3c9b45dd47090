//! A message's wire layout: the fields in order, the versions each is present in, and their types.

/// A message's wire layout at all its versions.
#[derive(Debug)]
pub struct Shape {
    /// The message's name in Kafka's definitions, e.g. `MetadataResponse`.
    pub name: &'static str,
    /// The API key, or -1 for a message that is not a request or response body.
    pub api_key: i16,
    /// The versions Kafka defines (inclusive).
    pub versions: (i16, i16),
    /// The first flexible version (compact encodings, tagged fields); i16::MAX for none.
    pub flexible_from: i16,
    pub fields: &'static [Field],
}

/// One field of a message or of a struct inside it.
#[derive(Debug)]
pub struct Field {
    /// The versions the field is present in (inclusive).
    pub versions: (i16, i16),
    /// Its tag when it is a tagged field (flexible versions only), else -1.
    pub tag: i32,
    pub ty: Ty,
}

/// A field's wire type.
#[derive(Debug)]
pub enum Ty {
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

impl Shape {
    /// Whether Kafka defines `version` of this message.
    pub fn defines(&self, version: i16) -> bool {
        within(self.versions, version)
    }

    /// Whether `version` uses compact encodings and tagged fields.
    pub fn is_flexible(&self, version: i16) -> bool {
        version >= self.flexible_from
    }
}

impl Field {
    /// Whether the field is read in place at `version` (present, and not a tagged field there).
    pub fn in_place(&self, version: i16, flexible: bool) -> bool {
        within(self.versions, version) && !(flexible && self.tag >= 0)
    }

    /// Whether the field is a tagged field at `version`.
    pub fn tagged_in(&self, version: i16, flexible: bool) -> bool {
        flexible && self.tag >= 0 && within(self.versions, version)
    }
}

pub(crate) fn within((low, high): (i16, i16), version: i16) -> bool {
    low <= version && version <= high
}
