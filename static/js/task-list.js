// The task list follows the runs of your projects without a reload: whenever one starts, moves or ends, the
// navigation's inbox socket says so (`workgraph:activity`, nav-inbox.js) and the page fetches its own URL
// again — its filters and page included — and swaps in the rows and the pager (live-regions.js). The filter
// form is no live region: what is being typed there stays as it is.
import { liveRegions } from "./live-regions.js";

const regions = liveRegions();
document.addEventListener("workgraph:activity", regions.refresh);
