/**
 * Posture wire shapes: posture check types, posture checks (one body shape for every kind: the kind fields are
 * optional here and required per `typeId` by domain/posture), posture responses, identity posture data and failed
 * service requests.
 * @see edge-api management.yml postureCheckCreate/Update/Patch/Detail and their x-class kinds, postureCheckTypeDetail,
 *   postureData, failedServiceRequest; client.yml postureResponseCreate and its kinds, postureResponse
 */
import { Type } from '@sinclair/typebox'
import { Attributes, BaseEntity, StringEnum, Tags } from './common.ts'

const opt = Type.Optional
const Strings = Type.Array(Type.String({ maxLength: 1024 }), { maxItems: 1000 })
const Name = Type.String({ minLength: 1, maxLength: 255 })

export const OsType = StringEnum(['Windows', 'WindowsServer', 'Android', 'iOS', 'Linux', 'macOS'])
export const PostureCheckTypeId = StringEnum(['OS', 'PROCESS', 'DOMAIN', 'MAC', 'MFA', 'PROCESS_MULTI'])
export const OperatingSystem = Type.Object({ type: OsType, versions: Strings })

export const PostureCheckTypeDetail = Type.Object({
  ...BaseEntity,
  name: Type.String(),
  operatingSystems: Type.Array(OperatingSystem),
  version: Type.String(),
})

const OperatingSystemIn = Type.Object({ type: Type.String(), versions: opt(Type.Union([Strings, Type.Null()])) })
const ProcessIn = Type.Object({
  osType: Type.String(),
  path: Type.String({ maxLength: 4096 }),
  hashes: opt(Type.Union([Strings, Type.Null()])),
  signerFingerprint: opt(Type.Union([Type.String(), Type.Null()])),
})
const ProcessMultiIn = Type.Object({
  osType: Type.String(),
  path: Type.String({ maxLength: 4096 }),
  hashes: opt(Type.Union([Strings, Type.Null()])),
  signerFingerprints: opt(Type.Union([Strings, Type.Null()])),
})

/** Kind fields of every posture check kind; which ones a check needs depends on its typeId. */
const KindFields = {
  operatingSystems: opt(Type.Array(OperatingSystemIn, { maxItems: 100 })),
  process: opt(ProcessIn),
  processes: opt(Type.Array(ProcessMultiIn, { maxItems: 100 })),
  semantic: opt(Type.String()),
  domains: opt(Strings),
  macAddresses: opt(Strings),
  timeoutSeconds: opt(Type.Union([Type.Integer(), Type.Null()])),
  promptOnWake: opt(Type.Union([Type.Boolean(), Type.Null()])),
  promptOnUnlock: opt(Type.Union([Type.Boolean(), Type.Null()])),
  ignoreLegacyEndpoints: opt(Type.Union([Type.Boolean(), Type.Null()])),
}

export const PostureCheckCreate = Type.Object({
  name: Name,
  typeId: Type.String(),
  roleAttributes: opt(Attributes),
  tags: opt(Tags),
  ...KindFields,
})
export const PostureCheckUpdate = Type.Object({ ...PostureCheckCreate.properties, typeId: opt(Type.String()) })
export const PostureCheckPatch = Type.Partial(PostureCheckCreate)

const Process = Type.Object({ osType: OsType, path: Type.String(), hashes: opt(Type.Array(Type.String())), signerFingerprint: opt(Type.String()) })
const ProcessMulti = Type.Object({
  osType: OsType,
  path: Type.String(),
  hashes: opt(Type.Array(Type.String())),
  signerFingerprints: opt(Type.Array(Type.String())),
})

export const PostureCheckDetail = Type.Object({
  ...BaseEntity,
  name: Type.String(),
  typeId: Type.String(),
  roleAttributes: Type.Union([Type.Array(Type.String()), Type.Null()]),
  version: Type.Integer(),
  operatingSystems: opt(Type.Array(OperatingSystem)),
  process: opt(Process),
  processes: opt(Type.Array(ProcessMulti)),
  semantic: opt(Type.String()),
  domains: opt(Type.Array(Type.String())),
  macAddresses: opt(Type.Array(Type.String())),
  timeoutSeconds: opt(Type.Integer()),
  promptOnWake: opt(Type.Boolean()),
  promptOnUnlock: opt(Type.Boolean()),
  ignoreLegacyEndpoints: opt(Type.Boolean()),
})

/** One posture response: the fields of every kind, required per typeId by domain/posture. */
export const PostureResponseCreate = Type.Object({
  id: Type.String({ maxLength: 255 }),
  typeId: Type.String(),
  type: opt(Type.String({ maxLength: 255 })),
  version: opt(Type.String({ maxLength: 255 })),
  build: opt(Type.String({ maxLength: 255 })),
  domain: opt(Type.String({ maxLength: 1024 })),
  macAddresses: opt(Strings),
  path: opt(Type.String({ maxLength: 4096 })),
  isRunning: opt(Type.Boolean()),
  hash: opt(Type.String({ maxLength: 1024 })),
  signerFingerprints: opt(Strings),
  woken: opt(Type.Boolean()),
  unlocked: opt(Type.Boolean()),
})
export const PostureResponseBulk = Type.Array(PostureResponseCreate, { maxItems: 1000 })

export const PostureResponseService = Type.Object({
  id: Type.String(),
  name: Type.String(),
  postureQueryType: Type.String(),
  timeout: Type.Integer(),
  timeoutRemaining: Type.Integer(),
})
export const PostureResponseAnswer = Type.Object({ services: Type.Array(PostureResponseService) })
