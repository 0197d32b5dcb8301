//! nfdc's batch mode (`nfdc -f FILE`, `-` for stdin): one command a line, read and checked
//! before any is sent. A line is split as Boost's `escaped_list_separator` splits it (spaces and
//! tabs separate, `"` and `'` quote, `\` escapes the next character); a line ending with an odd
//! number of `\` goes on with the next; empty lines and lines starting with `#` are skipped.

use std::io::Read as _;

use super::{parse, status, Command, Failure};

/// Most bytes of a batch file.
const MAX_BATCH_BYTES: u64 = 16 << 20;

/// The batch `args` (after `-f`/`--batch`, given as `flag`) name: read, split, parsed.
pub(super) fn read(flag: &str, args: &[String]) -> Result<Command, Failure> {
    let [file] = args else {
        return Err(Failure::new(
            status::USAGE,
            format!(
                "ERROR: Invalid command line arguments: {flag} should follow with batch-file. \
                 Use -h for more detail."
            ),
        ));
    };
    let (source, text) = if file == "-" {
        let mut s = String::new();
        std::io::stdin()
            .lock()
            .take(MAX_BATCH_BYTES)
            .read_to_string(&mut s)
            .map_err(|e| Failure::new(status::USAGE, format!("ERROR: cannot read stdin ({e})")))?;
        ("standard input".to_owned(), s)
    } else {
        let s = std::fs::read_to_string(file).map_err(|e| {
            Failure::new(
                status::USAGE,
                format!("ERROR: Could not open `{file}` batch file ({e})"),
            )
        })?;
        (file.clone(), s)
    };
    let commands = parse_lines(&text, &source)?;
    Ok(Command::Batch { source, commands })
}

/// Every command of a batch's `text`, with the line it starts on.
fn parse_lines(text: &str, source: &str) -> Result<Vec<(usize, Command)>, Failure> {
    let mut out = Vec::new();
    let mut lines = text.lines().enumerate();
    while let Some((i, first)) = lines.next() {
        let mut line = first.to_owned();
        let mut last = i;
        while line.chars().rev().take_while(|&c| c == '\\').count() % 2 == 1 {
            line.pop();
            match lines.next() {
                Some((j, more)) => {
                    line.push_str(more);
                    last = j;
                }
                None => break,
            }
        }
        let tokens = split(&line);
        if tokens.first().is_none_or(|t| t.starts_with('#')) {
            continue;
        }
        let cmd = parse(&tokens).map_err(|e| {
            Failure::new(
                e.status,
                format!(
                    "{}\n  >> Syntax error on line {} of the batch in {source}",
                    e.message,
                    last + 1
                ),
            )
        })?;
        out.push((i + 1, cmd));
    }
    Ok(out)
}

/// One line's tokens (empty ones dropped).
fn split(line: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => cur.extend(chars.next()),
            '"' | '\'' => quoted = !quoted,
            ' ' | '\t' if !quoted => tokens.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    tokens.push(cur);
    tokens.retain(|t| !t.is_empty());
    tokens
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nfdc::FaceRef;

    #[test]
    fn lines_split_as_nfdc() {
        assert_eq!(
            split("  route add\t/a  'x y' \"p\\\"q\" a\\ b"),
            vec!["route", "add", "/a", "x y", "p\"q", "a b"]
        );
        let text = "# a comment\n\nroute add /a 5 \\\n  cost 3\n  strategy unset /x\n";
        let v = parse_lines(text, "f").unwrap();
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].0, 3);
        let Command::RouteAdd(r) = &v[0].1 else {
            panic!("{v:?}")
        };
        assert_eq!((r.nexthop.clone(), r.cost), (FaceRef::Id(5), 3));
        assert_eq!(v[1].0, 5);
        let e = parse_lines("status\nroute frob\n", "b.txt").unwrap_err();
        assert_eq!(e.status, 2);
        assert_eq!(
            e.message,
            "No such command: route frob\n  >> Syntax error on line 2 of the batch in b.txt"
        );
        let e = read("-f", &[]).unwrap_err();
        assert_eq!(e.status, 2);
        assert!(read("--batch", &["/nonexistent/batch".into()])
            .unwrap_err()
            .message
            .starts_with("ERROR: Could not open `/nonexistent/batch` batch file ("));
    }
}
