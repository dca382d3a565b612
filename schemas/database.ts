/** Database operations: the data integrity results (edge-api management.yml dataIntegrityCheckDetails). */
import { Type } from '@sinclair/typebox'

export const DataIntegrityCheckDetail = Type.Object({ description: Type.String(), fixed: Type.Boolean() })

export const DataIntegrityCheckDetails = Type.Object({
  startTime: Type.String({ format: 'date-time' }),
  endTime: Type.String({ format: 'date-time' }),
  error: Type.String(),
  fixingErrors: Type.Boolean(),
  inProgress: Type.Boolean(),
  results: Type.Array(DataIntegrityCheckDetail),
  tooManyErrors: Type.Boolean(),
})
