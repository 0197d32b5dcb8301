//! TLV-TYPE numbers of the NDN packet format v0.3, NDNLPv2 and the NFD management protocol.

#![allow(missing_docs)] // the names are the specification's own

// Packets
pub const INTEREST: u32 = 0x05;
pub const DATA: u32 = 0x06;
pub const LP_PACKET: u32 = 0x64;

// Name and components
pub const NAME: u32 = 0x07;
pub const GENERIC_COMPONENT: u32 = 0x08;
pub const IMPLICIT_SHA256_DIGEST: u32 = 0x01;
pub const PARAMETERS_SHA256_DIGEST: u32 = 0x02;
pub const KEYWORD: u32 = 0x20;
pub const SEGMENT: u32 = 0x32;
pub const BYTE_OFFSET: u32 = 0x34;
pub const VERSION: u32 = 0x36;
pub const TIMESTAMP: u32 = 0x38;
pub const SEQUENCE_NUM: u32 = 0x3A;

// Interest
pub const CAN_BE_PREFIX: u32 = 0x21;
pub const MUST_BE_FRESH: u32 = 0x12;
pub const FORWARDING_HINT: u32 = 0x1E;
pub const DELEGATION: u32 = 0x1F;
pub const PREFERENCE: u32 = 0x1E;
pub const NONCE: u32 = 0x0A;
pub const INTEREST_LIFETIME: u32 = 0x0C;
pub const HOP_LIMIT: u32 = 0x22;
pub const APPLICATION_PARAMETERS: u32 = 0x24;
pub const INTEREST_SIGNATURE_INFO: u32 = 0x2C;
pub const INTEREST_SIGNATURE_VALUE: u32 = 0x2E;

// Data
pub const META_INFO: u32 = 0x14;
pub const CONTENT: u32 = 0x15;
pub const SIGNATURE_INFO: u32 = 0x16;
pub const SIGNATURE_VALUE: u32 = 0x17;
pub const CONTENT_TYPE: u32 = 0x18;
pub const FRESHNESS_PERIOD: u32 = 0x19;
pub const FINAL_BLOCK_ID: u32 = 0x1A;

// Signature
pub const SIGNATURE_TYPE: u32 = 0x1B;
pub const KEY_LOCATOR: u32 = 0x1C;
pub const KEY_DIGEST: u32 = 0x1D;
pub const SIGNATURE_NONCE: u32 = 0x26;
pub const SIGNATURE_TIME: u32 = 0x28;
pub const SIGNATURE_SEQ_NUM: u32 = 0x2A;
pub const VALIDITY_PERIOD: u32 = 0xFD;

// NDNLPv2
pub const LP_FRAGMENT: u32 = 0x50;
pub const LP_SEQUENCE: u32 = 0x51;
pub const LP_FRAG_INDEX: u32 = 0x52;
pub const LP_FRAG_COUNT: u32 = 0x53;
pub const LP_HOP_COUNT: u32 = 0x54;
pub const LP_PIT_TOKEN: u32 = 0x62;
pub const LP_NACK: u32 = 0x0320;
pub const LP_NACK_REASON: u32 = 0x0321;
pub const LP_NEXT_HOP_FACE_ID: u32 = 0x0330;
pub const LP_INCOMING_FACE_ID: u32 = 0x032C;
pub const LP_CACHE_POLICY: u32 = 0x0334;
pub const LP_CACHE_POLICY_TYPE: u32 = 0x0335;
pub const LP_CONGESTION_MARK: u32 = 0x0340;
pub const LP_ACK: u32 = 0x0344;
pub const LP_TX_SEQUENCE: u32 = 0x0348;
pub const LP_NON_DISCOVERY: u32 = 0x034C;
pub const LP_PREFIX_ANNOUNCEMENT: u32 = 0x0350;
/// Cascade's NB-CC signal (Nack-α / Nack-β, see `lp::NbccSignal`): 952, in the range a
/// receiver that does not know it ignores (800..=959, two low bits 00), unassigned by NDNLPv2.
pub const LP_NBCC: u32 = 0x03B8;

// NFD management
pub const CONTROL_RESPONSE: u32 = 0x65;
pub const STATUS_CODE: u32 = 0x66;
pub const STATUS_TEXT: u32 = 0x67;
pub const CONTROL_PARAMETERS: u32 = 0x68;
pub const FACE_ID: u32 = 0x69;
pub const COST: u32 = 0x6A;
pub const STRATEGY: u32 = 0x6B;
pub const FLAGS: u32 = 0x6C;
pub const EXPIRATION_PERIOD: u32 = 0x6D;
pub const ORIGIN: u32 = 0x6F;
pub const MASK: u32 = 0x70;
pub const URI: u32 = 0x72;
pub const LOCAL_URI: u32 = 0x81;
pub const CAPACITY: u32 = 0x83;
pub const COUNT: u32 = 0x84;
pub const FACE_PERSISTENCY: u32 = 0x85;
pub const BASE_CONGESTION_MARKING_INTERVAL: u32 = 0x87;
pub const DEFAULT_CONGESTION_THRESHOLD: u32 = 0x88;
pub const MTU: u32 = 0x89;
