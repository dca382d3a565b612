/**
 * What the terminators feature sends a router, typed: answers to its terminator requests (each a reply to the
 * request) and the validation requests. Bodies come from the message schemas (control-messages.ts), or are empty,
 * or are the text of a Result or an edge error, as the real controller writes them.
 * @see router-control-plane.md §4.2, §4.3; ziti controller/handler_edge_ctrl/create_terminator_v2.go, common.go
 *   returnError; common/handler_common (SendServerBusy); controller/network/router_messaging.go
 */
import { ContentType as EdgeType, CreateTerminatorResult, CreateTerminatorV2ResponseSchema } from '../pb/edge_ctrl_pb.ts'
import { ValidateTerminatorsV2RequestSchema } from '../pb/ctrl_pb.ts'
import type { ControlChannel } from '../channel/control-channel.ts'
import { replyTyped, sendTyped } from '../control-messages.ts'
import { ChannelContentType, ChannelHeader, type Frame } from '../wire/control-frame.ts'
import { encodeBool, encodeString, encodeU32 } from '../wire/control-headers.ts'
import { RETRY_HINT, type RouterRequestError } from '../../domain/router/router-request-errors.ts'
import type { ValidationRequest } from './terminator-validations.ts'

/** Headers of an edge error reply (20002): the edge error code and the retry hint. */
export const EDGE_ERROR_HEADERS = { ErrorCode: 1014, RetryHint: 18 } as const
/** A Result's error code header and its value for "rate limited" (the router asks again later). */
export const RESULT_ERROR_CODE_HEADER = 10
export const RESULT_ERROR_RATE_LIMITED = 1

export interface TerminatorSenders {
  /**
   * CreateTerminatorV2Response (20217), the reply to the request: Success, or the error's result (FailedBusy for a
   * TooBusy hint, FailedOther for any other, as the real controller maps hints) with message, code and hint.
   */
  createTerminatorResponse(to: Frame, terminatorId: string, error?: RouterRequestError): boolean
  /** UpdateTerminatorResponse (20210), the empty reply to an update that succeeded. */
  updateTerminatorResponse(to: Frame): boolean
  /** RemoveTerminatorResponse (20212), the empty reply to an edge removal that succeeded. */
  removeTerminatorResponse(to: Frame): boolean
  /** An edge error (20002) as the reply: body = message, header 1014 = code, 18 = retry hint. */
  edgeError(to: Frame, error: RouterRequestError): boolean
  /** A Result (2) as the reply: header 2 = success, body = text. */
  result(to: Frame, success: boolean, text?: string): void
  /** The busy Result: failure "server too busy" with header 10 = 1 (rate limited), so the router asks again. */
  busyResult(to: Frame): boolean
  /** ValidateTerminatorsV2Request (1041) with fixInvalid and postCreate set, as the real controller sends every one. */
  validateTerminators(req: ValidationRequest): boolean
}

export function terminatorSenders(ch: ControlChannel): TerminatorSenders {
  return {
    createTerminatorResponse(to, terminatorId, error) {
      const init = error
        ? {
            terminatorId,
            result: error.retryHint === RETRY_HINT.TooBusy ? CreateTerminatorResult.FailedBusy : CreateTerminatorResult.FailedOther,
            msg: error.message,
            errorCode: error.code,
            retryHint: error.retryHint,
          }
        : { terminatorId, result: CreateTerminatorResult.Success }
      return replyTyped(ch, to, CreateTerminatorV2ResponseSchema, init) !== undefined
    },
    updateTerminatorResponse(to) {
      return ch.reply(to, { contentType: EdgeType.UpdateTerminatorResponseType }) !== undefined
    },
    removeTerminatorResponse(to) {
      return ch.reply(to, { contentType: EdgeType.RemoveTerminatorResponseType }) !== undefined
    },
    edgeError(to, error) {
      const headers = new Map([
        [EDGE_ERROR_HEADERS.ErrorCode as number, encodeU32(error.code)],
        [EDGE_ERROR_HEADERS.RetryHint as number, encodeU32(error.retryHint)],
      ])
      return ch.reply(to, { contentType: EdgeType.ErrorType, headers, body: encodeString(error.message) }) !== undefined
    },
    result(to, success, text = '') {
      ch.replyResult(to, success, text)
    },
    busyResult(to) {
      const headers = new Map([
        [ChannelHeader.ResultSuccess as number, encodeBool(false)],
        [RESULT_ERROR_CODE_HEADER, encodeU32(RESULT_ERROR_RATE_LIMITED)],
      ])
      return ch.reply(to, { contentType: ChannelContentType.Result, headers, body: encodeString('server too busy') }) !== undefined
    },
    validateTerminators(req) {
      const terminators = req.terminators.map((t) => ({ id: t.id, binding: t.binding, address: t.address, marker: t.marker }))
      return sendTyped(ch, ValidateTerminatorsV2RequestSchema, { terminators, fixInvalid: true, postCreate: true }) !== undefined
    },
  }
}
