/**
 * What the fabric API reads of links and circuits until the control plane keeps them: this node knows no links and
 * built no circuits, which is the truth while no link or circuit registry runs (lists are empty, an id is 404, a
 * PATCH or DELETE finds nothing). Replaced by the control plane's registries (src/control/links, src/control/circuits)
 * when they are merged: they are handed to bootRoutes as `links` and `circuits`, and these go.
 */
import type { CircuitControl, LinkControl } from '../domain/fabric/fabric-types.ts'

export const NO_LINKS: LinkControl = { all: () => [], get: () => undefined, update: () => undefined }

export const NO_CIRCUITS: CircuitControl = { all: () => [], get: () => undefined, remove: () => false }
