// A browser wallet of the Wallet Standard for the browser tests, as an
// extension injects one: it registers itself with the page (both halves of
// the handshake), connects, signs in as a wallet writes the Sign-In-With-
// Solana message (@solana/wallet-standard-util's createSignInMessageText),
// signs messages, and signs and sends transactions to an RPC node.
//
// The test sets window.__testWallet before this runs:
//   secret: the Ed25519 seed, 32 bytes as an array of numbers
//   name, icon: what the wallet calls itself (defaults below)
//   rpc: the JSON-RPC URL transactions are sent to
//   chains: the chains it is on (default ["solana:devnet"])
//   tamper: "domain" or "nonce" to sign a message other than asked for
//   noSignIn: true to offer no solana:signIn
//   reject: true to decline every request, as a person who says no
(() => {
  const cfg = window.__testWallet || {};
  const B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
  function b58(bytes) {
    const digits = [];
    for (const b of bytes) {
      let carry = b;
      for (let i = 0; i < digits.length; i++) { carry += digits[i] * 256; digits[i] = carry % 58; carry = Math.floor(carry / 58); }
      while (carry) { digits.push(carry % 58); carry = Math.floor(carry / 58); }
    }
    let out = "";
    for (const b of bytes) { if (b !== 0) break; out += "1"; }
    for (let i = digits.length - 1; i >= 0; i--) out += B58[digits[i]];
    return out;
  }
  const fromB64u = (s) => Uint8Array.from(atob(s.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0));
  const pkcs8 = Uint8Array.from([0x30, 0x2e, 2, 1, 0, 0x30, 5, 6, 3, 0x2b, 0x65, 0x70, 4, 0x22, 4, 0x20, ...cfg.secret]);
  const keys = (async () => {
    const key = await crypto.subtle.importKey("pkcs8", pkcs8, { name: "Ed25519" }, true, ["sign"]);
    const publicKey = fromB64u((await crypto.subtle.exportKey("jwk", key)).x);
    return { key, publicKey, address: b58(publicKey) };
  })();
  const sign = async (bytes) => new Uint8Array(await crypto.subtle.sign("Ed25519", (await keys).key, bytes));
  const chains = cfg.chains || ["solana:devnet"];
  const features = ["solana:signMessage", "solana:signAndSendTransaction", ...(cfg.noSignIn ? [] : ["solana:signIn"])];
  let accounts = [];
  const account = async () => {
    const k = await keys;
    return Object.freeze({ address: k.address, publicKey: k.publicKey, chains, features, label: "Test account" });
  };
  const declined = () => { const e = new Error("User rejected the request."); e.code = 4001; return e; };

  // The message text as @solana/wallet-standard-util writes it from an input.
  function signInText(i) {
    let m = `${i.domain} wants you to sign in with your Solana account:\n${i.address}`;
    if (i.statement) m += `\n\n${i.statement}`;
    const f = [];
    if (i.uri) f.push(`URI: ${i.uri}`);
    if (i.version) f.push(`Version: ${i.version}`);
    if (i.chainId) f.push(`Chain ID: ${i.chainId}`);
    if (i.nonce) f.push(`Nonce: ${i.nonce}`);
    if (i.issuedAt) f.push(`Issued At: ${i.issuedAt}`);
    if (i.expirationTime) f.push(`Expiration Time: ${i.expirationTime}`);
    if (i.notBefore) f.push(`Not Before: ${i.notBefore}`);
    if (i.requestId) f.push(`Request ID: ${i.requestId}`);
    if (i.resources) { f.push("Resources:"); for (const r of i.resources) f.push(`- ${r}`); }
    if (f.length) m += `\n\n${f.join("\n")}`;
    return m;
  }

  // A transaction's wire form: a compact-u16 count of signatures, the
  // 64-byte signatures, then the message, whose first account key (after
  // the version byte of a v0 message and the 3-byte header) pays the fee
  // and signs first.
  function compactU16(b, at) {
    let n = 0, shift = 0, i = at;
    for (;;) { const c = b[i++]; n |= (c & 0x7f) << shift; if (!(c & 0x80)) break; shift += 7; }
    return [n, i];
  }
  async function signTransaction(tx) {
    const [count, start] = compactU16(tx, 0);
    const msgAt = start + 64 * count;
    const msg = tx.slice(msgAt);
    let at = (msg[0] & 0x80) ? 1 : 0; // v0 message
    at += 3;
    const [, keysAt] = compactU16(msg, at);
    const payer = msg.slice(keysAt, keysAt + 32);
    const k = await keys;
    if (count < 1 || b58(payer) !== k.address) throw new Error("the transaction's fee payer is not this account");
    const out = Uint8Array.from(tx);
    const sig = await sign(msg);
    out.set(sig, start);
    return [out, sig];
  }

  const listeners = { change: new Set() };
  const wallet = {
    version: "1.0.0",
    name: cfg.name || "Test Wallet",
    icon: cfg.icon || "data:image/svg+xml;base64," + btoa('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#5b3cc4"/><path d="M9 16h14M16 9v14" stroke="#fff" stroke-width="3"/></svg>'),
    chains,
    get accounts() { return accounts; },
    features: {
      "standard:connect": {
        version: "1.0.0",
        connect: async () => {
          if (cfg.reject) throw declined();
          accounts = [await account()];
          listeners.change.forEach((f) => f({ accounts }));
          return { accounts };
        },
      },
      "standard:events": {
        version: "1.0.0",
        on: (event, f) => { (listeners[event] ||= new Set()).add(f); return () => listeners[event].delete(f); },
      },
      "solana:signMessage": {
        version: "1.0.0",
        signMessage: async (...inputs) => Promise.all(inputs.map(async ({ message }) => {
          if (cfg.reject) throw declined();
          let text = new TextDecoder().decode(message);
          if (cfg.tamper === "domain") text = text.replace(/^[^ ]+ /, "evil.example ");
          if (cfg.tamper === "nonce") text = text.replace(/\nNonce: .*/, "\nNonce: Zz" + "9".repeat(14));
          const signedMessage = new TextEncoder().encode(text);
          return { signedMessage, signature: await sign(signedMessage) };
        })),
      },
      "solana:signAndSendTransaction": {
        version: "1.0.0",
        supportedTransactionVersions: ["legacy", 0],
        signAndSendTransaction: async (...inputs) => Promise.all(inputs.map(async ({ transaction, chain }) => {
          if (cfg.reject) throw declined();
          if (!chains.includes(chain)) throw new Error("this wallet is on " + chains.join(", ") + ", not " + chain);
          const [signed, signature] = await signTransaction(transaction);
          const r = await fetch(cfg.rpc, { method: "POST", headers: { "Content-Type": "application/json" },
            body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "sendTransaction", params: [btoa(String.fromCharCode(...signed)), { encoding: "base64" }] }) });
          const j = await r.json();
          if (j.error) throw new Error(j.error.message);
          return { signature };
        })),
      },
    },
  };
  if (!cfg.noSignIn) wallet.features["solana:signIn"] = {
    version: "1.0.0",
    signIn: async (...inputs) => Promise.all(inputs.map(async (input) => {
      if (cfg.reject) throw declined();
      const acc = await account();
      const i = { ...input, domain: input.domain || location.host, address: input.address || acc.address };
      if (cfg.tamper === "domain") i.domain = "evil.example";
      if (cfg.tamper === "nonce") i.nonce = "Zz" + "9".repeat(14);
      const signedMessage = new TextEncoder().encode(signInText(i));
      return { account: acc, signedMessage, signature: await sign(signedMessage), signatureType: "ed25519" };
    })),
  };

  // registerWallet of @wallet-standard/wallet.
  const callback = ({ register }) => register(wallet);
  class RegisterWalletEvent extends Event {
    #detail;
    constructor(cb) { super("wallet-standard:register-wallet", { bubbles: false, cancelable: false, composed: false }); this.#detail = cb; }
    get detail() { return this.#detail; }
  }
  window.dispatchEvent(new RegisterWalletEvent(callback));
  window.addEventListener("wallet-standard:app-ready", ({ detail: api }) => callback(api));
})();
