// Write transactions differ per dialect; the one definition lives with the other dialect knowledge.
export { writeTransaction } from "./Dialect.js"
