// crtx: the parts of a page that change on their own — a deposit request
// waiting for its transfer, withdrawals on their way — are read again from
// the server every two seconds and put in place without a reload, until
// what they show is final. Each such part is an aria-live region, and is
// replaced only when its state changed, so a screen reader hears changes
// alone. Without this script the page is right as of its loading.
//
// A run whose agent streams shows its result as the agent writes it: each
// [data-pieces] element follows its run's pieces (Server-Sent Events)
// until their end, when the poll shows the run as it ended.
const followPieces = (root) => root.querySelectorAll("[data-pieces]").forEach((el) => {
  if (el.dataset.following) return;
  el.dataset.following = "1";
  const events = new EventSource(el.dataset.pieces);
  events.addEventListener("delta", (ev) => { el.textContent += JSON.parse(ev.data).text; });
  events.addEventListener("end", () => events.close());
});
document.addEventListener("DOMContentLoaded", () => {
  followPieces(document);
  document.querySelectorAll("[data-poll]").forEach((region) => {
    const state = (root) => { const el = root.querySelector("[data-state]"); return el ? el.dataset.state : null; };
    const final = () => region.querySelector("[data-final]") !== null;
    // Every two seconds at first, then less often: a page left open on a
    // request nobody pays reads it about once a minute.
    let every = 2000;
    const tick = async () => {
      try {
        // A session that ended answers with a redirect to the sign-in page,
        // which must not land inside the region: reading stops there.
        const r = await fetch(region.dataset.poll, { redirect: "manual", cache: "no-store" });
        if (r.type === "opaqueredirect") return;
        if (r.ok) {
          const t = document.createElement("template");
          t.innerHTML = await r.text();
          if (state(t.content) !== state(region)) {
            region.replaceChildren(t.content);
            followPieces(region);
          }
        }
      } catch (e) {
        // The network failed this once; the next turn tries again.
      }
      every = Math.min(every * 1.1, 60000);
      if (!final()) setTimeout(tick, every);
    };
    if (!final()) setTimeout(tick, every);
  });
});
