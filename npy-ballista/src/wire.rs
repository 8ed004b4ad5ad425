//! The bytes the codecs write: a magic prefix, a wire version, a message tag, then a prost
//! message. The prefix tells our blobs from Ballista's; the version lets a newer
//! npy-ballista refuse an older peer's blob by name instead of misreading it.

use std::collections::BTreeMap;

use datafusion::error::{DataFusionError, Result};
use npy_datafusion::{Kind, NpyReadOptions};
use prost::Message;

/// Every blob of ours starts with these bytes.
const MAGIC: &[u8] = b"\x93npy-ballista";
/// The wire version this crate writes and reads: 2 since scans carry their filter (a peer
/// of version 1 would drop it and give rows the filter drops).
const VERSION: u8 = 2;

/// What a blob holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Tag {
    /// An `NpyTable` (logical plan, client → scheduler).
    Table = b't',
    /// An `NpyFormatFactory` (logical plan, `COPY ... STORED AS NPY`).
    Format = b'f',
    /// A `DataSourceExec` over an `NpySource` (physical plan, scheduler → executors).
    Scan = b's',
    /// A `DataSinkExec` into an `NpySink` (physical plan of `COPY TO` / `INSERT INTO`).
    Sink = b'w',
}

impl Tag {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Tag::Table => "table",
            Tag::Format => "file format",
            Tag::Scan => "scan",
            Tag::Sink => "sink",
        }
    }

    fn from_byte(b: u8) -> Option<Tag> {
        [Tag::Table, Tag::Format, Tag::Scan, Tag::Sink].into_iter().find(|t| *t as u8 == b)
    }
}

/// Writes `message` framed as a blob of kind `tag` at the end of `buf`.
pub(crate) fn write(buf: &mut Vec<u8>, tag: Tag, message: &impl Message) {
    buf.reserve(MAGIC.len() + 2 + message.encoded_len());
    buf.extend_from_slice(MAGIC);
    buf.push(VERSION);
    buf.push(tag as u8);
    // Encoding into a Vec cannot run out of room.
    message.encode_raw(buf);
}

/// Opens a blob: `Ok(None)` when `buf` is not ours (hand it to the next codec), its tag
/// and message bytes when it is, an error when it is ours but of another wire version, of
/// an unknown kind, or cut short.
pub(crate) fn open(buf: &[u8]) -> Result<Option<(Tag, &[u8])>> {
    let Some(rest) = buf.strip_prefix(MAGIC) else {
        return Ok(None);
    };
    match rest {
        [VERSION, t, body @ ..] => match Tag::from_byte(*t) {
            Some(tag) => Ok(Some((tag, body))),
            None => Err(DataFusionError::Internal(format!("npy-ballista: a plan blob of unknown kind {t:#04x}"))),
        },
        [] | [VERSION] => Err(DataFusionError::Internal("npy-ballista: a plan blob ends after its magic bytes".into())),
        [version, ..] => Err(DataFusionError::NotImplemented(format!(
            "npy-ballista: a plan blob has wire version {version}, this build reads version {VERSION} \
             (scheduler, executors and client need the same npy-ballista)"
        ))),
    }
}

/// Decodes the message of an opened blob of kind `tag`.
pub(crate) fn decode<M: Message + Default>(tag: Tag, body: &[u8]) -> Result<M> {
    M::decode(body).map_err(|e| {
        DataFusionError::Internal(format!("npy-ballista {}: cannot decode the plan blob: {e}", tag.name()))
    })
}

/// Reads a blob that can only be of kind `tag`: as [`open`], and an error when it holds
/// another kind.
pub(crate) fn read<M: Message + Default>(buf: &[u8], tag: Tag) -> Result<Option<M>> {
    match open(buf)? {
        None => Ok(None),
        Some((found, body)) if found == tag => decode(tag, body).map(Some),
        Some((found, _)) => Err(DataFusionError::Internal(format!(
            "npy-ballista: the plan blob holds a {}, not a {}",
            found.name(),
            tag.name()
        ))),
    }
}

/// The kind and read options every npy blob carries.
#[derive(Clone, PartialEq, Message)]
pub(crate) struct FormatProto {
    /// 1 = `.npy` files, 2 = `.npz` archives.
    #[prost(uint32, tag = "1")]
    pub kind: u32,
    /// `NpyReadOptions::to_map`.
    #[prost(btree_map = "string, string", tag = "2")]
    pub options: BTreeMap<String, String>,
}

impl FormatProto {
    pub(crate) fn new(kind: Kind, options: &NpyReadOptions) -> Self {
        FormatProto {
            kind: match kind {
                Kind::Npy => 1,
                Kind::Npz => 2,
            },
            options: options.to_table_options().into_iter().collect(),
        }
    }

    pub(crate) fn kind(&self) -> Result<Kind> {
        match self.kind {
            1 => Ok(Kind::Npy),
            2 => Ok(Kind::Npz),
            k => Err(DataFusionError::Internal(format!(
                "npy-ballista: unknown table kind {k} in a plan blob (1 = npy, 2 = npz)"
            ))),
        }
    }

    pub(crate) fn options(&self) -> Result<NpyReadOptions> {
        NpyReadOptions::from_table_options(&self.options.clone().into_iter().collect())
    }
}

/// An `NpyTable`: enough to rebuild its `ListingTable` without listing or inferring
/// anything (the schema travels beside it in the plan).
#[derive(Clone, PartialEq, Message)]
pub(crate) struct TableProto {
    #[prost(message, optional, tag = "1")]
    pub format: Option<FormatProto>,
    /// The table's URLs (`ListingTableUrl::as_str`).
    #[prost(string, repeated, tag = "2")]
    pub urls: Vec<String>,
    /// Per URL, its glob pattern, or "" for none.
    #[prost(string, repeated, tag = "3")]
    pub globs: Vec<String>,
    /// `ListingOptions::file_extension`.
    #[prost(string, tag = "4")]
    pub file_extension: String,
    /// Names of the partition columns (their types come from the plan's schema).
    #[prost(string, repeated, tag = "5")]
    pub partition_cols: Vec<String>,
}

/// A file scan: our kind and options around DataFusion's own `FileScanExecConf`.
#[derive(Clone, PartialEq, Message)]
pub(crate) struct ScanProto {
    #[prost(message, optional, tag = "1")]
    pub format: Option<FormatProto>,
    #[prost(message, optional, tag = "2")]
    pub conf: Option<datafusion_proto::protobuf::FileScanExecConf>,
    /// The filter the scan evaluates (`NpySource::predicate`), over the table schema.
    #[prost(message, optional, tag = "3")]
    pub predicate: Option<datafusion_proto::protobuf::PhysicalExprNode>,
}

/// A write: the kind of files and DataFusion's own `FileSinkConfig`, and the order the sink
/// requires of its input (the input plan travels as the node's child).
#[derive(Clone, PartialEq, Message)]
pub(crate) struct SinkProto {
    #[prost(message, optional, tag = "1")]
    pub format: Option<FormatProto>,
    #[prost(message, optional, tag = "2")]
    pub conf: Option<datafusion_proto::protobuf::FileSinkConfig>,
    #[prost(message, optional, tag = "3")]
    pub sort_order: Option<datafusion_proto::protobuf::PhysicalSortExprNodeCollection>,
}
