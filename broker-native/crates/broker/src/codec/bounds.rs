//! Checks every count in a request body against the bytes left in its frame,
//! before anything is decoded.
//!
//! kafka-protocol's decoders reserve a vector from an array's count as read
//! from the wire (`Vec::with_capacity(n)`), so a 23-byte Metadata request
//! claiming 0x7fffffff topics makes the process ask for 150 GB and abort.
//! Here the body is walked once against its wire shape ([`super::shapes`],
//! generated from Kafka's message definitions): each array's count must fit
//! in what is left of the frame at the smallest size its element can take, and
//! each string or byte field must fit as well. Only then is the body decoded,
//! so no allocation is larger than a constant times the frame, whose size the
//! server bounds.
//!
//! The walk reads the body as kafka-protocol does: the same fields in the same
//! order for a version, compact encodings in flexible versions, tagged fields
//! it knows decoded in place and others skipped by size.

use super::shape::{Field, Ty};
use super::shapes;

fn within((low, high): (i16, i16), version: i16) -> bool {
    low <= version && version <= high
}

/// Walks `body` (the request after its header) for `api_key` at `version`.
/// `Err` says which count or size does not fit, for the connection's log.
/// APIs without a shape are left to the decoder, which refuses them.
pub fn check(api_key: i16, version: i16, body: &[u8]) -> Result<(), String> {
    let Some(shape) = shapes::ALL.iter().find(|s| s.api_key == api_key) else {
        return Ok(());
    };
    if !within(shape.versions, version) {
        return Err(format!("version {version} of API {api_key} is not defined"));
    }
    let mut walker = Walker {
        body,
        pos: 0,
        version,
        flexible: version >= shape.flexible_from,
    };
    walker.fields(shape.fields)
}

struct Walker<'a> {
    body: &'a [u8],
    pos: usize,
    version: i16,
    flexible: bool,
}

type Walk = Result<(), String>;

impl Walker<'_> {
    fn left(&self) -> usize {
        self.body.len() - self.pos
    }

    fn skip(&mut self, n: usize, what: &str) -> Walk {
        if n > self.left() {
            return Err(format!(
                "{what} of {n} bytes does not fit in the {} bytes left",
                self.left()
            ));
        }
        self.pos += n;
        Ok(())
    }

    fn read<const N: usize>(&mut self) -> Result<[u8; N], String> {
        let at = self.pos;
        self.skip(N, "a fixed-width field")?;
        Ok(self.body[at..at + N].try_into().expect("N bytes"))
    }

    fn uvarint(&mut self) -> Result<u32, String> {
        let mut value = 0u32;
        for i in 0..5 {
            let [byte] = self.read::<1>()?;
            value |= u32::from(byte & 0x7f) << (7 * i);
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err("an unsigned varint longer than 5 bytes".into())
    }

    /// A length or count: `None` for null (-1, or 0 in compact form).
    fn length(&mut self, width: usize) -> Result<Option<u64>, String> {
        if self.flexible {
            return Ok(match self.uvarint()? {
                0 => None,
                n => Some(u64::from(n) - 1),
            });
        }
        let n = if width == 2 {
            i64::from(i16::from_be_bytes(self.read::<2>()?))
        } else {
            i64::from(i32::from_be_bytes(self.read::<4>()?))
        };
        match n {
            -1 => Ok(None),
            n if n < 0 => Err(format!("a negative length ({n})")),
            n => Ok(Some(n as u64)),
        }
    }

    fn fields(&mut self, fields: &[Field]) -> Walk {
        for field in fields {
            if within(field.versions, self.version) && !(self.flexible && field.tag >= 0) {
                self.value(&field.ty)?;
            }
        }
        if self.flexible {
            self.tagged(fields)?;
        }
        Ok(())
    }

    /// The tagged-field section: known tags are read in place (as the
    /// decoder does), unknown ones skipped by their size.
    fn tagged(&mut self, fields: &[Field]) -> Walk {
        let count = self.uvarint()?;
        for _ in 0..count {
            let tag = self.uvarint()?;
            let size = self.uvarint()? as usize;
            match fields.iter().find(|f| f.tag >= 0 && f.tag as u32 == tag) {
                Some(field) if within(field.versions, self.version) => self.value(&field.ty)?,
                Some(_) => return Err(format!("tag {tag} is not valid in this version")),
                None => self.skip(size, "an unknown tagged field")?,
            }
        }
        Ok(())
    }

    fn value(&mut self, ty: &Ty) -> Walk {
        match ty {
            Ty::Fixed(width) => self.skip(usize::from(*width), "a fixed-width field"),
            Ty::Str => match self.length(2)? {
                Some(n) => self.skip_u64(n, "a string"),
                None => Ok(()),
            },
            Ty::Bytes => match self.length(4)? {
                Some(n) => self.skip_u64(n, "a byte field"),
                None => Ok(()),
            },
            Ty::Array(element) => {
                let Some(count) = self.length(4)? else {
                    return Ok(());
                };
                let smallest = self.min_size(element).max(1) as u64;
                if count.saturating_mul(smallest) > self.left() as u64 {
                    return Err(format!(
                        "an array of {count} elements (at least {smallest} bytes each) does not fit in the {} bytes left",
                        self.left()
                    ));
                }
                for _ in 0..count {
                    self.value(element)?;
                }
                Ok(())
            }
            Ty::Struct(fields) => self.fields(fields),
        }
    }

    fn skip_u64(&mut self, n: u64, what: &str) -> Walk {
        let n = usize::try_from(n).map_err(|_| format!("{what} of {n} bytes"))?;
        self.skip(n, what)
    }

    /// The fewest bytes a value of `ty` takes at this version.
    fn min_size(&self, ty: &Ty) -> usize {
        let length = |plain: usize| if self.flexible { 1 } else { plain };
        match ty {
            Ty::Fixed(width) => usize::from(*width),
            Ty::Str => length(2),
            Ty::Bytes | Ty::Array(_) => length(4),
            Ty::Struct(fields) => {
                let present: usize = fields
                    .iter()
                    .filter(|f| within(f.versions, self.version) && !(self.flexible && f.tag >= 0))
                    .map(|f| self.min_size(&f.ty))
                    .sum();
                present + usize::from(self.flexible)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::{decode_request, Request, VersionTable};
    use bytes::{BufMut, Bytes, BytesMut};
    use kafka_protocol::messages::ApiKey;

    struct All;
    impl VersionTable for All {
        fn supports(&self, api_key: ApiKey, version: i16) -> bool {
            shapes::ALL
                .iter()
                .any(|s| s.api_key == api_key as i16 && within(s.versions, version))
        }
    }

    /// Writes random bodies that follow a shape: the mirror of [`Walker`].
    struct Writer {
        out: BytesMut,
        version: i16,
        flexible: bool,
        seed: u64,
    }

    impl Writer {
        fn next(&mut self, below: u64) -> u64 {
            // xorshift: deterministic and dependency-free.
            self.seed ^= self.seed << 13;
            self.seed ^= self.seed >> 7;
            self.seed ^= self.seed << 17;
            self.seed % below
        }

        fn uvarint(&mut self, mut n: u32) {
            while n >= 0x80 {
                self.out.put_u8((n as u8 & 0x7f) | 0x80);
                n >>= 7;
            }
            self.out.put_u8(n as u8);
        }

        fn length(&mut self, n: usize, width: usize) {
            if self.flexible {
                self.uvarint(n as u32 + 1);
            } else if width == 2 {
                self.out.put_i16(n as i16);
            } else {
                self.out.put_i32(n as i32);
            }
        }

        fn fields(&mut self, fields: &[Field]) {
            for field in fields {
                if within(field.versions, self.version) && !(self.flexible && field.tag >= 0) {
                    self.value(&field.ty);
                }
            }
            if self.flexible {
                let version = self.version;
                let mut known: Vec<&Field> = Vec::new();
                for f in fields
                    .iter()
                    .filter(|f| f.tag >= 0 && within(f.versions, version))
                {
                    if self.next(2) == 0 {
                        known.push(f);
                    }
                }
                self.uvarint(known.len() as u32 + 1);
                for field in known {
                    let mut inner = Writer {
                        out: BytesMut::new(),
                        version: self.version,
                        flexible: true,
                        seed: self.next(u64::MAX) | 1,
                    };
                    inner.value(&field.ty);
                    self.uvarint(field.tag as u32);
                    self.uvarint(inner.out.len() as u32);
                    self.out.extend_from_slice(&inner.out);
                    self.seed = inner.seed;
                }
                // One tag no version knows, which must be skipped by size.
                self.uvarint(9999);
                self.uvarint(3);
                self.out.extend_from_slice(b"xyz");
            }
        }

        fn value(&mut self, ty: &Ty) {
            match ty {
                Ty::Fixed(width) => {
                    for _ in 0..*width {
                        // Small values: bools stay 0 or 1, enums stay in range.
                        let byte = self.next(2) as u8;
                        self.out.put_u8(byte);
                    }
                }
                Ty::Str => {
                    let n = self.next(6) as usize;
                    self.length(n, 2);
                    for _ in 0..n {
                        let c = b'a' + self.next(26) as u8;
                        self.out.put_u8(c);
                    }
                }
                Ty::Bytes => {
                    let n = self.next(9) as usize;
                    self.length(n, 4);
                    self.out.extend(std::iter::repeat_n(0u8, n));
                }
                Ty::Array(element) => {
                    let n = self.next(4) as usize;
                    self.length(n, 4);
                    for _ in 0..n {
                        self.value(element);
                    }
                }
                Ty::Struct(fields) => self.fields(fields),
            }
        }
    }

    /// A frame body: header (as the API's header version wants) and `body`.
    fn frame(api_key: ApiKey, version: i16, body: &[u8]) -> Bytes {
        let mut out = BytesMut::new();
        out.put_i16(api_key as i16);
        out.put_i16(version);
        out.put_i32(42);
        out.put_i16(4);
        out.extend_from_slice(b"test");
        if api_key.request_header_version(version) >= 2 {
            out.put_u8(0);
        }
        out.extend_from_slice(body);
        out.freeze()
    }

    #[test]
    fn every_shape_matches_what_kafka_protocol_decodes() {
        let mut checked = 0;
        for shape in shapes::ALL {
            let api_key = ApiKey::try_from(shape.api_key).unwrap();
            // Versions both Kafka's definitions and kafka-protocol know.
            let known = api_key.valid_versions();
            let low = shape.versions.0.max(known.min);
            for version in low..=shape.versions.1.min(known.max) {
                for seed in 1..=40u64 {
                    let mut writer = Writer {
                        out: BytesMut::new(),
                        version,
                        flexible: version >= shape.flexible_from,
                        seed: seed.wrapping_mul(0x9E37_79B9_7F4A_7C15),
                    };
                    writer.fields(shape.fields);
                    let body = writer.out.freeze();
                    check(shape.api_key, version, &body).unwrap_or_else(|e| {
                        panic!("{api_key:?} v{version} seed {seed}: refused its own body: {e}")
                    });
                    // kafka-protocol must read the same body to its last byte.
                    match decode_request(frame(api_key, version, &body), &All) {
                        Ok(_) => checked += 1,
                        // Versions defined by Kafka but not yet by kafka-protocol.
                        Err(e) if e.to_string().contains("version not supported") => {}
                        Err(e) => {
                            panic!("{api_key:?} v{version} seed {seed}: {e}\nbody {body:02x?}")
                        }
                    }
                }
            }
        }
        assert!(checked > 22 * 40, "checked {checked} bodies");
    }

    /// Every count and length in a body cut short must be refused here, not
    /// trusted by the decoder: a valid body with one array count raised to
    /// the maximum is refused with a message naming the array.
    #[test]
    fn an_array_count_larger_than_the_frame_is_refused_before_decoding() {
        // Metadata v1 (topics: i32 count) and v9 (compact count): the
        // 23-byte request that aborted the process, and its compact twin.
        let v1 = b"\x00\x03\x00\x01\x00\x00\x00\x4d\x00\x05probe\x7f\xff\xff\xff";
        let v9 = b"\x00\x03\x00\x09\x00\x00\x00\x4d\x00\x05probe\x00\xff\xff\xff\xff\x0f\x00\x00\x00\x00";
        for raw in [&v1[..], &v9[..]] {
            match decode_request(Bytes::copy_from_slice(raw), &All) {
                Err(crate::Error::Malformed(message)) => {
                    assert!(message.contains("does not fit"), "{message}")
                }
                other => panic!("not refused: {other:?}"),
            }
        }
    }

    #[test]
    fn huge_counts_anywhere_in_any_request_are_refused() {
        // For each API and version: a body whose first array (wherever it
        // is) claims i32::MAX or u32::MAX - 1 elements, followed by nothing.
        for shape in shapes::ALL {
            let api_key = ApiKey::try_from(shape.api_key).unwrap();
            for version in shape.versions.0..=shape.versions.1 {
                let flexible = version >= shape.flexible_from;
                let mut writer = Writer {
                    out: BytesMut::new(),
                    version,
                    flexible,
                    seed: 7,
                };
                // Fields before the first top-level array, then its count.
                let mut wrote_count = false;
                for field in shape.fields {
                    if !within(field.versions, version) || (flexible && field.tag >= 0) {
                        continue;
                    }
                    if let Ty::Array(_) = field.ty {
                        if flexible {
                            writer.out.extend_from_slice(b"\xff\xff\xff\xff\x0f");
                        } else {
                            writer.out.put_i32(i32::MAX);
                        }
                        wrote_count = true;
                        break;
                    }
                    writer.value(&field.ty);
                }
                if !wrote_count {
                    continue;
                }
                let raw = frame(api_key, version, &writer.out);
                assert!(
                    matches!(decode_request(raw, &All), Err(crate::Error::Malformed(_))),
                    "{api_key:?} v{version}"
                );
            }
        }
    }

    #[test]
    fn the_real_metadata_request_of_a_client_still_decodes() {
        let raw = b"\x00\x03\x00\x01\x00\x00\x00\x02\x00\x07kafkajs\x00\x00\x00\x01\x00\x01t";
        let decoded = decode_request(Bytes::from_static(raw), &All).unwrap();
        assert!(matches!(decoded.body, Request::Metadata(_)));
    }
}
