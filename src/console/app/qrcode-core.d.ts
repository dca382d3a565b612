// The encoder alone of the `qrcode` package (its `create`, typed by @types/qrcode), without the package's canvas/SVG
// renderers and their helpers, which the console does not use (ui/qr.tsx draws the matrix itself): 4 KiB less script.
declare module 'qrcode/lib/core/qrcode.js' {
  export { create } from 'qrcode'
}
