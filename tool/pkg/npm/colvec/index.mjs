// ES module entry point: the same functions as index.js.
import colvec from "./index.js";
export const { getLoadablePath, load, platforms } = colvec;
export default colvec;
