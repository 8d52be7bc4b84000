import { useEffect, useState } from 'react';
import QRCode from 'qrcode';

/** The engine's QR string drawn as an image (the same string WhatsApp's own QR encodes). */
export function QrCode({ value, blurred = false }: { value: string; blurred?: boolean }) {
  const [src, setSrc] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    QRCode.toDataURL(value, { margin: 1, width: 264, errorCorrectionLevel: 'L' }).then(
      (url) => live && setSrc(url),
      () => live && setSrc(null),
    );
    return () => {
      live = false;
    };
  }, [value]);
  return (
    <div className={`qr-frame ${blurred ? 'blurred' : ''}`}>
      {src ? (
        <img src={src} width={264} height={264} alt="WhatsApp QR code to scan with your phone" data-qr={value} />
      ) : (
        <div className="qr-placeholder" />
      )}
    </div>
  );
}
