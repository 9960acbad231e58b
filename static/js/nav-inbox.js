// The navigation's inbox count, live on every page a signed-in person has open: the server says over
// /ws/inbox/ when the count it would render is not the one shown, and the badge is fetched again from
// /inbox/count/ and swapped in (live-regions.js) — its number and its words are the server's. Each swap
// counts up `data-inbox-renders` on <html>, leaving `data-live-renders` to the page's own regions.
//
// The same socket serves the list pages (tasks, runs, dashboard, inbox), so a tab keeps one: a page whose
// lists carry `data-activity` (the fingerprint of the person's runs they were rendered with) is told when a
// run of their projects moves as a list shows, and this module says so to the page as a
// `workgraph:activity` event on document — as it does when the inbox count changed, which the inbox
// page lists. The page fetches itself again; this module never touches its lists.
import { connectInbox } from "./live.js";
import { liveRegions } from "./live-regions.js";

const link = document.getElementById("nav-inbox");
if (link) {
  const badge = liveRegions({ url: link.dataset.liveUrl, counter: "inboxRenders" });
  const activity = () => document.dispatchEvent(new CustomEvent("workgraph:activity"));
  connectInbox(link.dataset.wsUrl, {
    shown: () => document.getElementById("inbox-count")?.dataset.count,
    activity: () => document.querySelector("[data-activity]")?.dataset.activity || undefined,
    onChanged() {
      badge.refresh();
      activity();
    },
    onActivity: activity,
  });
}
