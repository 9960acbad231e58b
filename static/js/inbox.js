// Inbox ("Waiting on you"): the list and the navigation's count follow the runs over /ws/runs/<id>/,
// without a reload. Any status change of a listed run fetches the page again and swaps in the list and
// the count (live-regions.js), so an item dealt with elsewhere leaves. A run that comes to wait and is
// not listed yet has no socket here: the page is fetched again every RESCAN_MS while it is shown, and
// its run is followed from then.
import { listedRunsFollowed } from "./live.js";
import { liveRegions } from "./live-regions.js";

const RESCAN_MS = 5_000;

const runs = listedRunsFollowed("#inbox-items [data-run-id]", () => {
  let known = null;
  return {
    onSnapshot(snapshot) {
      if (known !== null && known !== snapshot.status) regions.refresh();
      known = snapshot.status;
    },
    onEvent(event) {
      if (event.event === "run_status" || event.event === "nodes") regions.refresh();
    },
  };
});
const regions = liveRegions({ onApplied: runs.follow });

runs.follow();
setInterval(() => {
  if (document.visibilityState === "visible") regions.refresh();
}, RESCAN_MS);
