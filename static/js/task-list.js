// The task list, and a project page's recent tasks, follow the runs of your projects without a reload:
// whenever one starts, moves or ends, the navigation's inbox socket says so (`workgraph:activity`,
// nav-inbox.js) and the page fetches its own URL again — the list's filters and page included — and swaps in
// the rows and the pager (live-regions.js). The filter form and the project page's forms are no live
// regions: what is being typed there stays as it is.
import { liveRegions } from "./live-regions.js";

const regions = liveRegions();
document.addEventListener("workgraph:activity", regions.refresh);
