/**
 * A QR code drawn on a canvas (no HTML strings): the encoder alone of the `qrcode` package (`lib/core`'s `create`; the
 * package is already the controller's for its TOTP QR route) gives the module matrix, drawn here square by square with
 * a four-module quiet zone.
 */
import { create } from 'qrcode/lib/core/qrcode.js'
import { useEffect, useRef } from 'preact/hooks'

export function QrCode(props: { text: string; label: string; scale?: number }) {
  const ref = useRef<HTMLCanvasElement>(null)
  useEffect(() => {
    const canvas = ref.current
    if (!canvas) return
    const { modules } = create(props.text, { errorCorrectionLevel: 'L' })
    const scale = props.scale ?? 4
    const quiet = 4
    const side = (modules.size + quiet * 2) * scale
    canvas.width = side
    canvas.height = side
    const g = canvas.getContext('2d')
    if (!g) return
    g.fillStyle = '#fff'
    g.fillRect(0, 0, side, side)
    g.fillStyle = '#000'
    for (let r = 0; r < modules.size; r++) {
      for (let c = 0; c < modules.size; c++) {
        if (modules.get(r, c)) g.fillRect((c + quiet) * scale, (r + quiet) * scale, scale, scale)
      }
    }
  }, [props.text, props.scale])
  return <canvas ref={ref} class="qr" role="img" aria-label={props.label} />
}
