/**
 * Terminator wire shapes (Management API).
 * @see edge-api management.yml definitions terminatorCreate, terminatorUpdate, terminatorPatch, terminatorDetail
 */
import { Type } from '@sinclair/typebox'
import { BaseEntity, EntityRef, Tags } from './common.ts'
import { TerminatorCost, TerminatorPrecedence } from './identity.ts'

const Ref = Type.String({ minLength: 1 })
const Text = Type.String({ minLength: 1, maxLength: 4096 })

const settable = {
  cost: Type.Optional(TerminatorCost),
  precedence: Type.Optional(TerminatorPrecedence),
  tags: Type.Optional(Tags),
}

export const TerminatorCreate = Type.Object({
  ...settable,
  service: Ref,
  router: Ref,
  address: Text,
  binding: Text,
  identity: Type.Optional(Type.String({ maxLength: 4096 })),
  identitySecret: Type.Optional(Type.String({ maxLength: 4096 })),
})

export const TerminatorUpdate = Type.Object({ ...settable, service: Ref, router: Ref, address: Text, binding: Text })

export const TerminatorPatch = Type.Object({
  ...settable,
  service: Type.Optional(Ref),
  router: Type.Optional(Ref),
  address: Type.Optional(Text),
  binding: Type.Optional(Text),
})

export const TerminatorDetail = Type.Object({
  ...BaseEntity,
  serviceId: Type.String(),
  service: EntityRef,
  routerId: Type.String(),
  router: EntityRef,
  binding: Type.String(),
  address: Type.String(),
  identity: Type.String(),
  cost: TerminatorCost,
  dynamicCost: TerminatorCost,
  precedence: TerminatorPrecedence,
})
