//! File names, components, the TOC, and the decoding helpers every component shares.
//!
//! An SSTable of generation `G` in a directory is the set of files `khata-G-<Component>.db`.
//! The TOC is written last: it names the format version and, for every other component, its
//! length and the CRC32C of its whole contents. The TOC's first 12 bytes (magic and version) and
//! its last 4 bytes (CRC32C of everything before them) keep their place in every version, so a
//! reader can tell "damaged" from "written by a newer build". See `docs/format/sstable.md`.

use std::path::{Path, PathBuf};

use bytes::{BufMut, Bytes};
use khata_types::codec::{CodecError, Reader};

use crate::error::StorageError;

/// The SSTable format version this build writes.
pub const FORMAT_VERSION: u32 = 3;

/// Every format version this build reads (version 1 and 2 files stay readable; see
/// `docs/format/sstable.md` for what versions 2 and 3 changed).
pub const READABLE_VERSIONS: [u32; 3] = [1, 2, 3];

/// First bytes of every TOC.
pub const TOC_MAGIC: &[u8; 8] = b"KHATASST";

/// Prefix of every SSTable file name.
const FILE_PREFIX: &str = "khata-";

/// The files of one SSTable. The discriminant is the component's id in the TOC.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Component {
    /// Partitions, in compressed checksummed chunks.
    Data = 1,
    /// Where each chunk of Data starts on disk.
    CompressionInfo = 2,
    /// The partition index, in checksummed pages.
    Index = 3,
    /// The first key of every index page, loaded at open.
    Summary = 4,
    /// The Bloom filter on partition keys.
    Filter = 5,
    /// Statistics about the data.
    Statistics = 6,
    /// The table of contents; its appearance makes the SSTable exist.
    Toc = 7,
    /// Scratch space of a writer: the rows of a partition written row by row, held until its
    /// header (which gives their length) can be written. Only ever a `.tmp` file, never in
    /// the TOC; named so that a crash's leftover is removed with the unfinished SSTable.
    Rows = 8,
}

impl Component {
    /// Every component but the TOC, in the order the TOC lists them.
    pub const CONTENTS: [Component; 6] = [
        Component::Data,
        Component::CompressionInfo,
        Component::Index,
        Component::Summary,
        Component::Filter,
        Component::Statistics,
    ];

    /// The component's name in file names.
    pub fn name(self) -> &'static str {
        match self {
            Component::Data => "Data",
            Component::CompressionInfo => "CompressionInfo",
            Component::Index => "Index",
            Component::Summary => "Summary",
            Component::Filter => "Filter",
            Component::Statistics => "Statistics",
            Component::Toc => "TOC",
            Component::Rows => "Rows",
        }
    }

    fn from_name(name: &str) -> Option<Component> {
        Component::CONTENTS
            .into_iter()
            .chain([Component::Toc, Component::Rows])
            .find(|c| c.name() == name)
    }
}

/// The path of one component of generation `generation` in `dir`.
pub fn component_path(dir: &Path, generation: u64, component: Component) -> PathBuf {
    dir.join(format!("{FILE_PREFIX}{generation}-{}.db", component.name()))
}

/// What a file name in an SSTable directory says about itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParsedName {
    pub generation: u64,
    pub component: Component,
    /// A `.tmp` file: an SSTable still being written, or left behind by a crash.
    pub temporary: bool,
}

/// Parse `khata-<generation>-<Component>.db[.tmp]`; `None` for any other file.
pub fn parse_file_name(path: &Path) -> Option<ParsedName> {
    let name = path.file_name()?.to_str()?;
    let (name, temporary) = match name.strip_suffix(".tmp") {
        Some(stem) => (stem, true),
        None => (name, false),
    };
    let rest = name.strip_prefix(FILE_PREFIX)?.strip_suffix(".db")?;
    let (generation, component) = rest.split_once('-')?;
    if generation.is_empty() || !generation.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(ParsedName {
        generation: generation.parse().ok()?,
        component: Component::from_name(component)?,
        temporary,
    })
}

/// A decoding failure inside a component, before the path is known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatError {
    pub offset: u64,
    pub detail: String,
}

impl FormatError {
    pub fn new(offset: u64, detail: impl Into<String>) -> Self {
        FormatError {
            offset,
            detail: detail.into(),
        }
    }

    /// A codec error found at `base + position in the buffer`.
    pub fn codec(base: u64, reader: &Reader, err: CodecError) -> Self {
        FormatError::new(base + reader.position() as u64, err.to_string())
    }

    /// Attach the file the bytes came from.
    pub fn in_file(self, path: &Path) -> StorageError {
        StorageError::corrupt(path, self.offset, self.detail)
    }
}

/// Decoding helpers on the varint [`Reader`] for the fixed-width little-endian fields.
pub fn get_u8(r: &mut Reader) -> Result<u8, CodecError> {
    r.u8()
}

pub fn get_u32(r: &mut Reader) -> Result<u32, CodecError> {
    let b = r.take(4)?;
    let mut word = [0u8; 4];
    word.copy_from_slice(&b);
    Ok(u32::from_le_bytes(word))
}

pub fn get_u64(r: &mut Reader) -> Result<u64, CodecError> {
    let b = r.take(8)?;
    let mut word = [0u8; 8];
    word.copy_from_slice(&b);
    Ok(u64::from_le_bytes(word))
}

pub fn get_i64(r: &mut Reader) -> Result<i64, CodecError> {
    get_u64(r).map(|v| v as i64)
}

/// Length and whole-file CRC32C of one component, as the TOC records them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ComponentDigest {
    pub component: Component,
    pub length: u64,
    pub crc32c: u32,
}

/// The decoded TOC.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Toc {
    /// The format version the SSTable was written in (one of [`READABLE_VERSIONS`]).
    pub version: u32,
    pub generation: u64,
    /// One digest per entry of [`Component::CONTENTS`], in that order.
    pub components: Vec<ComponentDigest>,
}

impl Toc {
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(32 + 13 * self.components.len());
        out.put_slice(TOC_MAGIC);
        out.put_u32_le(self.version);
        out.put_u64_le(self.generation);
        out.put_u32_le(self.components.len() as u32);
        for d in &self.components {
            out.put_u8(d.component as u8);
            out.put_u64_le(d.length);
            out.put_u32_le(d.crc32c);
        }
        let crc = crc32c::crc32c(&out);
        out.put_u32_le(crc);
        out
    }

    /// Decode a TOC. `Err(Ok(version))` means the TOC is intact but of a version this build
    /// does not read; `Err(Err(_))` means it is damaged.
    pub fn decode(bytes: &[u8]) -> Result<Toc, Result<u32, FormatError>> {
        let damaged =
            |offset: usize, detail: &str| Err(Err(FormatError::new(offset as u64, detail)));
        if bytes.len() < TOC_MAGIC.len() + 8 {
            return damaged(0, "TOC shorter than its header");
        }
        let (body, trailer) = bytes.split_at(bytes.len() - 4);
        if !body.starts_with(TOC_MAGIC) {
            return damaged(0, "bad TOC magic");
        }
        let mut stored = [0u8; 4];
        stored.copy_from_slice(trailer);
        if crc32c::crc32c(body) != u32::from_le_bytes(stored) {
            return damaged(body.len(), "TOC checksum mismatch");
        }
        let mut r = Reader::new(Bytes::copy_from_slice(&body[TOC_MAGIC.len()..]));
        let base = TOC_MAGIC.len() as u64;
        let err = |r: &Reader, e| Err(Err(FormatError::codec(base, r, e)));
        let version = match get_u32(&mut r) {
            Ok(v) => v,
            Err(e) => return err(&r, e),
        };
        if !READABLE_VERSIONS.contains(&version) {
            return Err(Ok(version));
        }
        let parsed = (|| -> Result<Toc, CodecError> {
            let generation = get_u64(&mut r)?;
            let count = get_u32(&mut r)?;
            if count as usize != Component::CONTENTS.len() {
                return Err(CodecError::Invalid("wrong number of components"));
            }
            let mut components = Vec::with_capacity(Component::CONTENTS.len());
            for expected in Component::CONTENTS {
                if get_u8(&mut r)? != expected as u8 {
                    return Err(CodecError::Invalid("components out of order"));
                }
                let length = get_u64(&mut r)?;
                let crc32c = get_u32(&mut r)?;
                components.push(ComponentDigest {
                    component: expected,
                    length,
                    crc32c,
                });
            }
            if !r.is_empty() {
                return Err(CodecError::Invalid("trailing bytes"));
            }
            Ok(Toc {
                version,
                generation,
                components,
            })
        })();
        match parsed {
            Ok(toc) => Ok(toc),
            Err(e) => err(&r, e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_round_trip() {
        let p = component_path(Path::new("/d"), 42, Component::Statistics);
        assert_eq!(p, Path::new("/d/khata-42-Statistics.db"));
        let parsed = parse_file_name(&p).unwrap();
        assert_eq!(parsed.generation, 42);
        assert_eq!(parsed.component, Component::Statistics);
        assert!(!parsed.temporary);
        let tmp = parse_file_name(Path::new("/d/khata-7-TOC.db.tmp")).unwrap();
        assert!(tmp.temporary);
        // A writer's scratch file is named so that start-up removes a crash's leftover.
        let scratch = khata_env::fs::tmp_path(&component_path(Path::new("/d"), 9, Component::Rows));
        assert_eq!(scratch, Path::new("/d/khata-9-Rows.db.tmp"));
        let scratch = parse_file_name(&scratch).unwrap();
        assert_eq!((scratch.generation, scratch.temporary), (9, true));
        assert_eq!(parse_file_name(Path::new("/d/khata--TOC.db")), None);
        assert_eq!(parse_file_name(Path::new("/d/khata-1-Other.db")), None);
        assert_eq!(parse_file_name(Path::new("/d/CommitLog-1.log")), None);
    }

    #[test]
    fn toc_round_trips_and_detects_damage() {
        let toc = Toc {
            version: FORMAT_VERSION,
            generation: 9,
            components: Component::CONTENTS
                .iter()
                .map(|&c| ComponentDigest {
                    component: c,
                    length: c as u64 * 10,
                    crc32c: 7,
                })
                .collect(),
        };
        let bytes = toc.encode();
        assert_eq!(Toc::decode(&bytes), Ok(toc));
        for i in 0..bytes.len() {
            let mut bad = bytes.clone();
            bad[i] ^= 0x10;
            assert!(
                matches!(Toc::decode(&bad), Err(Err(_))),
                "flip at {i} accepted"
            );
        }
    }
}
