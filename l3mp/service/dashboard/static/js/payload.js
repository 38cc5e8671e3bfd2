// The graph payload of GET /dashboard/api/memories/{memory}/graph, as the service declares it
// (l3mp/service/schemas.py, GraphOut; the OpenAPI schema at /openapi.json). Entities and facts come as
// named columns, row i of each column describing the same entity or fact: one object per row would
// repeat every key for every entity. A test keeps these typedefs and the Python model in step.

/**
 * @typedef {object} GraphEntities
 * @property {string[]} name
 * @property {string[]} type
 * @property {string[]} label
 * @property {(string|null)[]} parent
 */

/**
 * @typedef {object} GraphFacts
 * @property {string[]} predicate
 * @property {string[][]} args
 */

/**
 * @typedef {object} GraphDiff
 * @property {string[]} added
 * @property {string[]} removed
 * @property {string[]} new_entities
 */

/**
 * @typedef {object} GraphPayload
 * @property {string} memory
 * @property {string} domain
 * @property {number} version
 * @property {number} now
 * @property {Object<string, string[]>} lineage
 * @property {string[]} constants
 * @property {GraphEntities} entities
 * @property {GraphFacts} facts
 * @property {string[]} unknown_location
 * @property {GraphDiff|null} diff
 */

/**
 * The entities' columns as one object per entity.
 * @param {GraphEntities} columns
 * @returns {{name: string, type: string, label: string, parent: string|null}[]}
 */
export function entityRows(columns) {
  return columns.name.map((name, i) => ({ name, type: columns.type[i], label: columns.label[i], parent: columns.parent[i] }));
}
