/** Build identity of this binary. The build script replaces these through `define`; from a checkout they are dev values. */
declare const EDGEPLANE_BUILD_REVISION: string | undefined
declare const EDGEPLANE_BUILD_DATE: string | undefined

export const VERSION = '0.1.0'
export const REVISION = typeof EDGEPLANE_BUILD_REVISION === 'string' ? EDGEPLANE_BUILD_REVISION : 'dev'
export const BUILD_DATE = typeof EDGEPLANE_BUILD_DATE === 'string' ? EDGEPLANE_BUILD_DATE : '1970-01-01T00:00:00Z'
