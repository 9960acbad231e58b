// The navigation's inbox count, live on every page a signed-in person has open: the server says over
// /ws/inbox/ when the count it would render is not the one shown, and the badge is fetched again from
// /inbox/count/ and swapped in (live-regions.js) — its number and its words are the server's. Each swap
// counts up `data-inbox-renders` on <html>, leaving `data-live-renders` to the page's own regions.
import { connectInbox } from "./live.js";
import { liveRegions } from "./live-regions.js";

const link = document.getElementById("nav-inbox");
if (link) {
  const badge = liveRegions({ url: link.dataset.liveUrl, counter: "inboxRenders" });
  connectInbox(link.dataset.wsUrl, {
    shown: () => document.getElementById("inbox-count")?.dataset.count,
    onChanged: badge.refresh,
  });
}
