// node fetch.mjs FACE-URI NAME CONTENT [COUNT]
//
// Connects to the router at FACE-URI (see transport.mjs), expresses COUNT (default 1) Interests
// for NAME, and checks that each is answered by a Data of that name whose content is the UTF-8
// text CONTENT. Prints one JSON line ({"fetched": n, "name": ..., "rtt_ms": [...]}) and exits 0;
// on any mismatch or timeout prints the reason on stderr and exits 1.
import { consume } from "@ndn/endpoint";
import { Interest, Name } from "@ndn/packet";

import { connect } from "./transport.mjs";

const [uri, nameUri, content, countArg] = process.argv.slice(2);
if (!uri || !nameUri || content === undefined) {
  console.error("usage: node fetch.mjs FACE-URI NAME CONTENT [COUNT]");
  process.exit(2);
}
const count = Number(countArg ?? "1");
const want = new Name(nameUri);

try {
  const { fw, face } = await connect(uri);
  const rtts = [];
  for (let i = 0; i < count; i++) {
    const interest = new Interest(want, Interest.Lifetime(2000));
    const ctx = consume(interest, { fw });
    const data = await ctx;
    if (!data.name.equals(want)) {
      throw new Error(`Data name ${data.name} is not ${want}`);
    }
    const got = new TextDecoder().decode(data.content);
    if (got !== content) {
      throw new Error(`content ${JSON.stringify(got)} is not ${JSON.stringify(content)}`);
    }
    rtts.push(ctx.rtt);
  }
  face.close();
  console.log(JSON.stringify({ fetched: count, name: want.toString(), rtt_ms: rtts }));
  process.exit(0);
} catch (err) {
  console.error(`fetch ${nameUri} over ${uri}: ${err?.message ?? err}`);
  process.exit(1);
}
