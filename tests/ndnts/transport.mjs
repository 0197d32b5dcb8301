// One place that turns a face URI into an NDNts face on a logical forwarder, so that every test
// script speaks to the router the same way over any transport:
//   ws://host:port     @ndn/ws-transport
//   unix:///path       @ndn/node-transport (Unix stream socket)
//   tcp://host:port    @ndn/node-transport
//   udp://host:port    @ndn/node-transport (unicast)
import { Forwarder } from "@ndn/fw";
import { TcpTransport, UdpTransport, UnixTransport } from "@ndn/node-transport";
import { WsTransport } from "@ndn/ws-transport";

/** The host and port of `tcp://host:port` or `udp://host:port`. */
function hostPort(rest) {
  const m = /^\[?([^\]]+)\]?:(\d+)$/.exec(rest);
  if (!m) {
    throw new Error(`bad host:port ${rest}`);
  }
  return { host: m[1], port: Number(m[2]) };
}

/**
 * Connects a new logical forwarder to the router at `uri`, with a route to "/" through it.
 * Returns the forwarder and its face (close the face when done).
 */
export async function connect(uri) {
  const fw = Forwarder.create();
  const opts = { fw, addRoutes: ["/"] };
  const [scheme, rest] = uri.split("://");
  let face;
  switch (scheme) {
    case "ws":
    case "wss":
      face = await WsTransport.createFace(opts, uri);
      break;
    case "unix":
      face = await UnixTransport.createFace(opts, rest);
      break;
    case "tcp":
      face = await TcpTransport.createFace(opts, hostPort(rest));
      break;
    case "udp":
      face = await UdpTransport.createFace(opts, hostPort(rest));
      break;
    default:
      throw new Error(`unsupported face URI ${uri}`);
  }
  return { fw, face };
}
