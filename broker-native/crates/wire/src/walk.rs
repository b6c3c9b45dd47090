//! One pass over a message against its [`Shape`], checking every count and size against the bytes
//! left before anything is decoded.
//!
//! The walk reads the message as kafka-protocol does: the same fields in the same order for a
//! version, compact encodings in flexible versions, tagged fields it knows read in place and others
//! skipped by size. Each array's count must fit in what is left at the smallest size its element
//! can take, and each string or byte field must fit as well; then no allocation the decoder makes
//! from a count is larger than a constant times the bytes it was given.

use crate::shape::{within, Field, Shape, Ty};
use crate::Error;

/// Walks `bytes` as `shape` at `version`; returns how many bytes the message takes (bytes after
/// it are left alone: a newer peer may append fields, and Kafka ignores trailing bytes).
pub fn walk(shape: &Shape, version: i16, bytes: &[u8]) -> Result<usize, Error> {
    if !shape.defines(version) {
        return Err(Error::UnknownVersion {
            name: shape.name,
            version,
        });
    }
    let mut walker = Walker {
        bytes,
        pos: 0,
        version,
        flexible: shape.is_flexible(version),
    };
    match walker.fields(shape.fields) {
        Ok(()) => Ok(walker.pos),
        Err(reason) => Err(Error::Malformed {
            name: shape.name,
            version,
            reason,
        }),
    }
}

struct Walker<'a> {
    bytes: &'a [u8],
    pos: usize,
    version: i16,
    flexible: bool,
}

type Walk = Result<(), String>;

impl Walker<'_> {
    fn left(&self) -> usize {
        self.bytes.len() - self.pos
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
        Ok(self.bytes[at..at + N].try_into().expect("N bytes"))
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
            if field.in_place(self.version, self.flexible) {
                self.value(&field.ty)?;
            }
        }
        if self.flexible {
            self.tagged(fields)?;
        }
        Ok(())
    }

    /// The tagged-field section: known tags are read in place (as the decoder does), unknown
    /// ones skipped by their size.
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
                match element {
                    // Fixed-width elements (partition ids, offsets): one skip for all of them.
                    Ty::Fixed(width) => self.skip(count as usize * usize::from(*width), "an array"),
                    _ => {
                        for _ in 0..count {
                            self.value(element)?;
                        }
                        Ok(())
                    }
                }
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
                    .filter(|f| f.in_place(self.version, self.flexible))
                    .map(|f| self.min_size(&f.ty))
                    .sum();
                present + usize::from(self.flexible)
            }
        }
    }
}
