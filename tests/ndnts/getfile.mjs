// node getfile.mjs FACE-URI PREFIX
//
// What NDNts applications do to fetch a file by its prefix alone: retrieve the RDR metadata
// (@ndn/rdr: PREFIX/32=metadata, CanBePrefix + MustBeFresh), then fetch the segments under the
// versioned name it carries (@ndn/segmented-object). Prints one JSON line
// ({"versioned": ..., "bytes": n, "sha256": hex}) and exits 0; on failure prints the reason on
// stderr and exits 1.
import { createHash } from "node:crypto";

import { retrieveMetadata } from "@ndn/rdr";
import { fetch } from "@ndn/segmented-object";

import { connect } from "./transport.mjs";

const [uri, prefix] = process.argv.slice(2);
if (!uri || !prefix) {
  console.error("usage: node getfile.mjs FACE-URI PREFIX");
  process.exit(2);
}

try {
  const { fw, face } = await connect(uri);
  const metadata = await retrieveMetadata(prefix, { fw, retx: 2 });
  const bytes = await fetch(metadata.name, { fw, retxLimit: 4 });
  face.close();
  console.log(JSON.stringify({
    versioned: metadata.name.toString(),
    bytes: bytes.length,
    sha256: createHash("sha256").update(bytes).digest("hex"),
  }));
  process.exit(0);
} catch (err) {
  console.error(`getfile ${prefix} over ${uri}: ${err?.message ?? err}`);
  process.exit(1);
}
