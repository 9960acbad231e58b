// Inbox ("Waiting on you"): the list and the navigation's count follow the runs over /ws/runs/<id>/,
// without a reload. Any status change of a listed run fetches the page again and swaps in the list and
// the count (live-regions.js), so an item dealt with elsewhere leaves. A run not listed yet that comes to
// wait is told by the navigation's inbox socket (`workgraph:activity`, nav-inbox.js, which also says when
// the count changed): the page is fetched again, and its run is followed from then.
import { listedRunsFollowed } from "./live.js";
import { liveRegions } from "./live-regions.js";

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
document.addEventListener("workgraph:activity", regions.refresh);
