// Starts a Surfnet (a local Solana network), prints its RPC URL as one JSON
// line, and stops it when stdin closes: the Go process holds the other end,
// so the network dies with it, even after a kill -9.
const path = require('path');
const { Surfnet } = require(path.join(process.env.CRTX_SURFPOOL, process.env.CRTX_SURFPOOL_PACKAGE));

// offline: an account the network does not hold is absent, never fetched
// from mainnet. Slots of CRTX_SURFNET_SLOT_MS: a blockhash expires after 150
// blocks.
const slotTimeMs = Number(process.env.CRTX_SURFNET_SLOT_MS || 400);
const net = Surfnet.startWithConfig({ blockProductionMode: 'clock', slotTimeMs, offline: true });
// The network queues an event for every slot and transaction in a bounded
// queue; once about a thousand are undrained, the slot producer blocks on it
// while holding the network's state, and every RPC call hangs. Nothing here
// reads them, so they are dropped as they come.
const drain = setInterval(() => net.drainEvents(), 100);
process.stdout.write(JSON.stringify({ rpcUrl: net.rpcUrl }) + '\n');
process.stdin.on('end', () => {
  clearInterval(drain);
  net.stop();
  process.exit(0);
});
process.stdin.resume();
