//! The vocabulary URL-shaped names are made of: TLDs, host labels, path words, extensions,
//! query keys, and pseudo-words.

use std::collections::HashSet;

use super::rng::Rng;

/// Top-level domains with rough popularity weights (IRCache-era traffic is mostly `.com`).
pub(super) const TLDS: &[(&str, f64)] = &[
    ("com", 52.0),
    ("net", 9.0),
    ("org", 6.0),
    ("edu", 3.0),
    ("de", 4.0),
    ("uk", 3.0),
    ("jp", 3.0),
    ("cn", 2.0),
    ("ru", 2.0),
    ("br", 2.0),
    ("fr", 2.0),
    ("info", 1.5),
    ("it", 1.5),
    ("nl", 1.5),
    ("au", 1.5),
    ("ca", 1.5),
    ("kr", 1.0),
    ("tv", 1.0),
    ("us", 1.0),
    ("gov", 1.0),
    ("es", 1.0),
    ("pl", 1.0),
    ("in", 1.0),
    ("mx", 0.5),
    ("biz", 0.5),
    ("tw", 0.5),
    ("se", 0.5),
    ("ch", 0.5),
];

/// Country TLDs that usually carry a second-level label such as `co` (`uk/co/bbc`).
pub(super) const CC_SECOND_LEVEL: &[(&str, &[&str])] = &[
    ("uk", &["co", "ac", "org", "gov"]),
    ("jp", &["co", "ne", "or", "ac"]),
    ("au", &["com", "net", "edu"]),
    ("br", &["com", "gov"]),
    ("cn", &["com", "net", "edu"]),
    ("kr", &["co", "or"]),
    ("mx", &["com"]),
    ("tw", &["com", "edu"]),
    ("in", &["co", "ac"]),
];

/// TLD-like first components that no realistic FIB routes (for non-matching Interests).
pub(super) const UNROUTED: &[&str] = &["invalid", "test", "example", "onion", "lan", "internal"];

/// Host labels (the most specific domain label).
pub(super) const HOSTS: &[&str] = &[
    "www", "images", "img", "static", "cdn", "news", "mail", "ads", "video", "media", "blog", "m",
    "en", "s", "i", "api", "shop", "login", "search", "maps", "download", "photos", "a", "ad",
    "pics", "web", "edition", "sports", "music", "forums",
];

/// Common URL path words (the head of the path-word Zipf distribution).
const PATH_WORDS: &[&str] = &[
    "images",
    "img",
    "news",
    "index",
    "cgi-bin",
    "search",
    "en",
    "us",
    "media",
    "static",
    "js",
    "css",
    "content",
    "files",
    "photos",
    "video",
    "2009",
    "2010",
    "blog",
    "forum",
    "wp-content",
    "uploads",
    "data",
    "ads",
    "api",
    "v1",
    "home",
    "products",
    "article",
    "story",
    "sports",
    "weather",
    "i",
    "pics",
    "thumbs",
    "assets",
    "scripts",
    "common",
    "default",
    "shared",
    "library",
    "music",
    "games",
    "world",
    "business",
    "tech",
    "entertainment",
    "politics",
    "local",
    "health",
    "travel",
    "2008",
    "01",
    "02",
    "03",
    "04",
    "05",
    "06",
    "07",
    "08",
    "09",
    "10",
    "11",
    "12",
    "include",
    "xml",
    "rss",
    "feeds",
    "banner",
    "banners",
    "adserver",
    "pagead",
    "ajax",
    "lib",
    "public",
    "user",
    "users",
    "profile",
    "members",
    "archive",
    "archives",
    "gallery",
    "download",
    "downloads",
    "docs",
    "help",
    "support",
    "about",
    "catalog",
    "shop",
    "cart",
];

/// File extensions of the last path component.
pub(super) const EXTENSIONS: &[(&str, f64)] = &[
    ("html", 14.0),
    ("jpg", 16.0),
    ("gif", 18.0),
    ("php", 8.0),
    ("js", 9.0),
    ("css", 5.0),
    ("png", 6.0),
    ("htm", 4.0),
    ("asp", 2.0),
    ("aspx", 2.0),
    ("swf", 2.0),
    ("xml", 2.0),
    ("jsp", 1.0),
    ("cgi", 1.0),
    ("txt", 1.0),
    ("flv", 1.0),
];

/// Query-string keys.
pub(super) const QUERY_KEYS: &[&str] = &[
    "id", "q", "p", "page", "s", "t", "ref", "lang", "cat", "type", "sid", "uid", "v", "u", "c",
    "key", "format", "size", "ts", "rnd", "callback", "r", "n", "src", "cid", "action", "mode",
];

const CONSONANTS: &[u8] = b"bcdfghjklmnprstvwxyz";
const VOWELS: &[u8] = b"aeiou";
pub(super) const ALNUM: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
pub(super) const HEX: &[u8] = b"0123456789abcdef";

/// A pronounceable pseudo-word of exactly `len` lowercase letters.
pub(super) fn word(rng: &mut Rng, len: usize) -> String {
    let mut s = String::with_capacity(len);
    let mut vowel = rng.chance(0.3);
    while s.len() < len {
        let set = if vowel { VOWELS } else { CONSONANTS };
        s.push(char::from(*rng.pick(set)));
        // Mostly alternate; sometimes two consonants in a row.
        vowel = if vowel { false } else { !rng.chance(0.15) };
    }
    s
}

/// A token of `len` characters from `alphabet`.
pub(super) fn token(rng: &mut Rng, alphabet: &[u8], len: usize) -> String {
    (0..len).map(|_| char::from(*rng.pick(alphabet))).collect()
}

/// A domain label (registered-domain name): pseudo-word, sometimes with a digit or hyphen part.
pub(super) fn domain_label(rng: &mut Rng) -> String {
    let len = rng.range(4, 13);
    let mut s = word(rng, len);
    if rng.chance(0.08) {
        s.push_str(&rng.range(1, 99).to_string());
    } else if rng.chance(0.08) {
        s.push('-');
        let l = rng.range(2, 6);
        s.push_str(&word(rng, l));
    }
    s
}

/// The vocabulary of path words: the common list, then generated words.
pub(super) fn path_vocabulary(rng: &mut Rng, size: usize) -> Vec<String> {
    let mut v: Vec<String> = PATH_WORDS.iter().map(|s| (*s).to_string()).collect();
    let mut seen: HashSet<String> = v.iter().cloned().collect();
    while v.len() < size.max(PATH_WORDS.len()) {
        let w = match rng.index(10) {
            0 => {
                let (a, b) = (rng.range(3, 7), rng.range(3, 7));
                format!("{}-{}", word(rng, a), word(rng, b))
            }
            1 => {
                let (a, b) = (rng.range(3, 6), rng.range(3, 7));
                format!("{}_{}", word(rng, a), word(rng, b))
            }
            2 => {
                let a = rng.range(3, 8);
                format!("{}{}", word(rng, a), rng.range(1, 999))
            }
            _ => {
                let a = rng.range(3, 11);
                word(rng, a)
            }
        };
        if seen.insert(w.clone()) {
            v.push(w);
        }
    }
    v
}
