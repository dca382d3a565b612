/**
 * Deleting an external JWT signer: the one place that decides whether a signer may go.
 * - an unknown signer: 404 NOT_FOUND (the CA actor decides)
 * - a signer an authentication policy names (`primary.extJwt.allowedSigners`, `secondary.requireExtJwtSigner`) must
 *   be refused with 409 CAN_NOT_DELETE_REFERENCED_ENTITY: policies are owned by the identity actor, so that check is
 *   `isReferenced`, read from its snapshot before asking the CA actor (a policy written between the read and the
 *   delete is the one race left: the login then finds no signer and refuses, which fails closed)
 * Failure story: one write to one actor (the `external-jwt-signers` sub-db); nothing to undo.
 */
import { ApiError } from '../../errors/api-error.ts'
import type { CaActor } from '../../actors/ca/ca-actor.ts'
import type { ChangeContext } from '../../actors/runtime/actor-runtime.ts'

export interface JwtSignerDeleteDeps {
  ca: CaActor
  /** The ids of the authentication policies that name the signer (`policiesNamingSigner` over the identity actor). */
  policiesNaming(signerId: string): readonly string[]
}

export async function deleteExternalJwtSigner(deps: JwtSignerDeleteDeps, id: string, change: ChangeContext): Promise<void> {
  const naming = deps.policiesNaming(id)
  if (naming.length > 0) {
    throw new ApiError('CAN_NOT_DELETE_REFERENCED_ENTITY', {
      cause: { kind: 'field', field: 'id', reason: `entity type externalJwtSigners referenced by authPolicies: [${naming.join(' ')}]`, value: `[${naming.join(' ')}]` },
    })
  }
  await deps.ca.ask({ type: 'jwtSigner.delete', id, change })
}
