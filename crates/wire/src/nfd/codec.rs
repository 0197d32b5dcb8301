//! The machinery every record shares: how one field is written and read ([`Codec`] and its
//! kinds), the container walk under the evolvability rules, and the [`record!`] macro that
//! states a record once, as a table of fields, and generates its struct, `encode` and `decode`.

use crate::error::{Error, ErrorKind, Result};
use crate::name::{Name, NameView};
use crate::tlv::{
    is_critical, write_nested, write_nni_tlv, write_tlv, Element, OrderCheck, Reader,
};
use crate::{tt, Limits};

/// How a field's value of type `V` is written as, and read from, one element of a given
/// TLV-TYPE. The implementors are the field kinds a [`record!`] table names.
pub(super) trait Codec<V> {
    /// Appends `v` as an element of type `typ`.
    fn encode(out: &mut Vec<u8>, typ: u32, v: &V);
    /// Reads the value of an element already known to be of the field's type.
    fn decode(e: Element<'_>) -> Result<V>;
}

/// A NonNegativeInteger, or an enumeration carried as one.
pub(super) struct Nni;

impl<T: From<u64> + Into<u64> + Copy> Codec<T> for Nni {
    fn encode(out: &mut Vec<u8>, typ: u32, v: &T) {
        write_nni_tlv(out, typ, (*v).into());
    }
    fn decode(e: Element<'_>) -> Result<T> {
        Ok(e.nni()?.into())
    }
}

/// A URI string: must be UTF-8 ([`ErrorKind::BadUri`] otherwise).
pub(super) struct Uri;

impl Codec<String> for Uri {
    fn encode(out: &mut Vec<u8>, typ: u32, v: &String) {
        write_tlv(out, typ, v.as_bytes());
    }
    fn decode(e: Element<'_>) -> Result<String> {
        String::from_utf8(e.value.to_vec())
            .map_err(|_| Error::new(ErrorKind::BadUri, e.value_offset))
    }
}

/// Free text: invalid UTF-8 is replaced, not rejected.
pub(super) struct Text;

impl Codec<String> for Text {
    fn encode(out: &mut Vec<u8>, typ: u32, v: &String) {
        write_tlv(out, typ, v.as_bytes());
    }
    fn decode(e: Element<'_>) -> Result<String> {
        Ok(decode_text(e))
    }
}

/// A Name (7), decoded under [`Limits::default`].
pub(super) struct NameTlv;

impl Codec<Name> for NameTlv {
    fn encode(out: &mut Vec<u8>, typ: u32, v: &Name) {
        debug_assert_eq!(typ, tt::NAME);
        v.encode(out);
    }
    fn decode(e: Element<'_>) -> Result<Name> {
        decode_name(e)
    }
}

/// Strategy (0x6b){Name}: a strategy's name, wrapped.
pub(super) struct Strategy;

impl Codec<Name> for Strategy {
    fn encode(out: &mut Vec<u8>, typ: u32, v: &Name) {
        write_nested(out, typ, |o| v.encode(o));
    }
    fn decode(e: Element<'_>) -> Result<Name> {
        let mut name = None;
        for_each_field(e.reader(), &[tt::NAME], &[], false, |f| {
            name = Some(decode_name(f)?);
            Ok(())
        })?;
        required(name, tt::NAME, e.offset)
    }
}

/// A record nested in another (NextHopRecord in FibEntry, Route in RibEntry): [`record!`]
/// implements `Codec<R>` for every wrapped record `R`.
pub(super) struct Nested;

fn decode_name(e: Element<'_>) -> Result<Name> {
    Ok(NameView::from_element(e, &Limits::default())?.to_name())
}

/// Free text, decoded lossily (see [`Text`]).
pub(super) fn decode_text(e: Element<'_>) -> String {
    String::from_utf8_lossy(e.value).into_owned()
}

/// Reads the single element of type `typ` that fills `buf`, then decodes it with `f`.
pub(super) fn decode_outer<'a, T>(
    buf: &'a [u8],
    typ: u32,
    f: impl FnOnce(Element<'a>) -> Result<T>,
) -> Result<T> {
    let mut r = Reader::new(buf);
    let e = r.read()?.expect(typ)?;
    if !r.is_empty() {
        return Err(Error::new(ErrorKind::TrailingBytes, r.offset()));
    }
    f(e)
}

/// Walks the elements of `r` under `order`, handing each accepted one to `f`. With
/// `any_order`, the recognized elements may come in any order (a non-repeatable one at most
/// once; unrecognized ones are skipped if non-critical), as ndn-cxx decodes ControlParameters
/// (it looks each field up), and as ndn-cxx encodes them (Flags, Mask, Strategy,
/// ExpirationPeriod and FacePersistency before the congestion fields and Mtu, not after them as
/// NFD's protocol page lists them).
pub(super) fn for_each_field<'a>(
    mut r: Reader<'a>,
    order: &'static [u32],
    repeatable: &'static [u32],
    any_order: bool,
    mut f: impl FnMut(Element<'a>) -> Result<()>,
) -> Result<()> {
    let mut check = OrderCheck::new(order, repeatable);
    let mut seen = 0u64;
    while let Some(e) = r.next_element() {
        let e = e?;
        if any_order {
            let i = order.iter().position(|&t| t == e.typ);
            match i {
                Some(i) if i < 64 && (seen & (1 << i) == 0 || repeatable.contains(&e.typ)) => {
                    seen |= 1 << i;
                    f(e)?;
                }
                known => {
                    if is_critical(e.typ) {
                        let kind = match known {
                            Some(_) => ErrorKind::OutOfOrder(e.typ),
                            None => ErrorKind::UnknownCritical(e.typ),
                        };
                        return Err(Error::new(kind, e.offset));
                    }
                }
            }
        } else if check.accept(&e)?.is_some() {
            f(e)?;
        }
    }
    Ok(())
}

/// The next element of `r`, which must be of type `typ` (the container starts at `offset`).
pub(super) fn next_required<'a>(
    r: &mut Reader<'a>,
    typ: u32,
    offset: usize,
) -> Result<Element<'a>> {
    match r.next_element() {
        Some(e) => e?.expect(typ),
        None => Err(Error::new(ErrorKind::Missing(typ), offset)),
    }
}

/// The value of a required field, or [`ErrorKind::Missing`] at `offset`.
pub(super) fn required<T>(v: Option<T>, typ: u32, offset: usize) -> Result<T> {
    v.ok_or(Error::new(ErrorKind::Missing(typ), offset))
}

/// Defines a record from its field table: the struct, and `encode`, `decode` and (for a record
/// wrapped in an outer TLV) `from_element`.
///
/// ```text
/// record! {
///     /// Route (0x81) inside a RibEntry.
///     #[derive(Debug, Clone, Default, PartialEq, Eq)]
///     pub struct Route in t::ROUTE {
///         /// FaceId (0x69).
///         face_id: u64 = req Nni(tt::FACE_ID),
///         /// ExpirationPeriod (0x6d), in milliseconds.
///         expiration_period: Option<u64> = opt Nni(tt::EXPIRATION_PERIOD),
///     }
/// }
/// ```
///
/// Each field is `name: type = CARDINALITY KIND(TLV-TYPE)`, in wire order: the table is both the
/// encoding order and the order decoding enforces. CARDINALITY is `req` (the field's type is the
/// value; absent on the wire is [`ErrorKind::Missing`] at the container's offset), `opt` (an
/// `Option`) or `many` (a `Vec`, the element may repeat). KIND is a [`Codec`] implementor:
/// `Nni`, `Uri`, `Text`, `NameTlv`, `Strategy` or `Nested`. Without `in TYPE` the record is not
/// wrapped: `encode` writes the bare elements and `decode` reads a whole buffer of them, missing
/// fields reported at offset 0.
macro_rules! record {
    // A record wrapped in an outer TLV of type `$outer`.
    (
        $(#[$meta:meta])*
        pub struct $name:ident in $outer:path { $($fields:tt)* }
    ) => {
        $crate::nfd::codec::record!($(#[$meta])* pub struct $name in $outer, any_order false { $($fields)* });
    };
    // The same; with `any_order true`, its elements are read in any order (each at most once
    // unless repeatable), as ndn-cxx reads ControlParameters.
    (
        $(#[$meta:meta])*
        pub struct $name:ident in $outer:path, any_order $any:literal { $($fields:tt)* }
    ) => {
        $crate::nfd::codec::record!(@fields $any, $(#[$meta])* $name { $($fields)* });

        impl $name {
            #[doc = concat!("Appends the ", stringify!($name), " TLV.")]
            pub fn encode(&self, out: &mut Vec<u8>) {
                $crate::tlv::write_nested(out, $outer, |o| self.encode_fields(o));
            }

            #[doc = concat!("Decodes a ", stringify!($name), " TLV that fills `buf` exactly.")]
            pub fn decode(buf: &[u8]) -> $crate::Result<Self> {
                $crate::nfd::codec::decode_outer(buf, $outer, Self::from_element)
            }

            #[doc = concat!("Decodes an already delimited ", stringify!($name), " element.")]
            pub fn from_element(e: $crate::tlv::Element<'_>) -> $crate::Result<Self> {
                let e = e.expect($outer)?;
                Self::decode_fields(e.reader(), e.offset)
            }
        }

        impl $crate::nfd::codec::Codec<$name> for $crate::nfd::codec::Nested {
            fn encode(out: &mut Vec<u8>, typ: u32, v: &$name) {
                debug_assert_eq!(typ, $outer);
                v.encode(out);
            }
            fn decode(e: $crate::tlv::Element<'_>) -> $crate::Result<$name> {
                $name::from_element(e)
            }
        }
    };

    // A record not wrapped: its elements are a whole buffer (a dataset's content).
    (
        $(#[$meta:meta])*
        pub struct $name:ident { $($fields:tt)* }
    ) => {
        $crate::nfd::codec::record!(@fields false, $(#[$meta])* $name { $($fields)* });

        impl $name {
            #[doc = concat!("Appends the ", stringify!($name), " elements (no outer TLV).")]
            pub fn encode(&self, out: &mut Vec<u8>) {
                self.encode_fields(out);
            }

            #[doc = concat!("Decodes the ", stringify!($name), " elements that fill `content`.")]
            pub fn decode(content: &[u8]) -> $crate::Result<Self> {
                Self::decode_fields($crate::tlv::Reader::new(content), 0)
            }
        }
    };

    // The struct, and the field table's encoder and decoder.
    (
        @fields $any:literal, $(#[$meta:meta])* $name:ident {
            $(
                $(#[$fmeta:meta])*
                $field:ident : $ty:ty = $card:ident $kind:ident($typ:expr)
            ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        pub struct $name {
            $( $(#[$fmeta])* pub $field: $ty, )*
        }

        impl $name {
            /// The recognized TLV-TYPEs, in order.
            const ORDER: &'static [u32] = &[$($typ),*];
            /// The recognized TLV-TYPEs that may repeat.
            const REPEATABLE: &'static [u32] =
                $crate::nfd::codec::record!(@repeatable [] $($card $typ,)*);

            fn encode_fields(&self, o: &mut Vec<u8>) {
                $( $crate::nfd::codec::record!(@encode $card $kind, o, $typ, &self.$field); )*
            }

            /// Decodes the fields read by `r`; a missing one is reported at `at`.
            fn decode_fields(r: $crate::tlv::Reader<'_>, at: usize) -> $crate::Result<Self> {
                let _ = at; // unused when every field is optional
                $( let mut $field = $crate::nfd::codec::record!(@empty $card $ty); )*
                $crate::nfd::codec::for_each_field(r, Self::ORDER, Self::REPEATABLE, $any, |f| {
                    $(
                        if f.typ == $typ {
                            let v = $crate::nfd::codec::record!(@decode $kind, f)?;
                            $crate::nfd::codec::record!(@put $card $field, v);
                        } else
                    )* {}
                    Ok(())
                })?;
                Ok($name {
                    $( $field: $crate::nfd::codec::record!(@finish $card $field, $typ, at), )*
                })
            }
        }
    };

    // The TLV-TYPEs of the `many` fields, as a slice.
    (@repeatable [$($acc:expr),*]) => { &[$($acc),*] };
    (@repeatable [$($acc:expr),*] many $typ:expr, $($rest:tt)*) => {
        $crate::nfd::codec::record!(@repeatable [$($acc,)* $typ] $($rest)*)
    };
    (@repeatable [$($acc:expr),*] $card:ident $typ:expr, $($rest:tt)*) => {
        $crate::nfd::codec::record!(@repeatable [$($acc),*] $($rest)*)
    };

    (@decode $kind:ident, $e:expr) => {
        <$crate::nfd::codec::$kind as $crate::nfd::codec::Codec<_>>::decode($e)
    };
    (@write $kind:ident, $o:ident, $typ:expr, $v:expr) => {
        <$crate::nfd::codec::$kind as $crate::nfd::codec::Codec<_>>::encode($o, $typ, $v)
    };

    (@encode req $kind:ident, $o:ident, $typ:expr, $v:expr) => {
        $crate::nfd::codec::record!(@write $kind, $o, $typ, $v)
    };
    (@encode opt $kind:ident, $o:ident, $typ:expr, $v:expr) => {
        if let Some(v) = $v {
            $crate::nfd::codec::record!(@write $kind, $o, $typ, v)
        }
    };
    (@encode many $kind:ident, $o:ident, $typ:expr, $v:expr) => {
        for v in $v {
            $crate::nfd::codec::record!(@write $kind, $o, $typ, v)
        }
    };

    (@empty req $ty:ty) => { Option::<$ty>::None };
    (@empty opt $ty:ty) => { <$ty>::None };
    (@empty many $ty:ty) => { <$ty>::new() };

    (@put req $field:ident, $v:ident) => { $field = Some($v) };
    (@put opt $field:ident, $v:ident) => { $field = Some($v) };
    (@put many $field:ident, $v:ident) => { $field.push($v) };

    (@finish req $field:ident, $typ:expr, $at:ident) => {
        $crate::nfd::codec::required($field, $typ, $at)?
    };
    (@finish opt $field:ident, $typ:expr, $at:ident) => { $field };
    (@finish many $field:ident, $typ:expr, $at:ident) => { $field };
}

pub(super) use record;

/// Defines an enumeration carried as a NonNegativeInteger, which keeps unknown values.
macro_rules! nni_enum {
    (
        $(#[$meta:meta])*
        $name:ident { $($(#[$vmeta:meta])* $variant:ident = $value:expr,)+ }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vmeta])* $variant,)+
            /// A value this version does not know, kept as is. Never holds a known value when
            /// produced by [`From<u64>`].
            Other(u64),
        }

        impl From<u64> for $name {
            fn from(v: u64) -> Self {
                match v {
                    $($value => $name::$variant,)+
                    other => $name::Other(other),
                }
            }
        }

        impl From<$name> for u64 {
            fn from(v: $name) -> u64 {
                match v {
                    $($name::$variant => $value,)+
                    $name::Other(other) => other,
                }
            }
        }
    };
}

pub(super) use nni_enum;
