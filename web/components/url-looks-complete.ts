// Detection in the editor (docs/protocol.md#detection-in-the-editor): the editor detects once the
// URL looks complete — http(s)://, no spaces, and a host that is localhost, an IP address, or a
// domain whose last label has two or more letters.
export function urlLooksComplete(text: string): boolean {
  if (!/^https?:\/\/\S+$/.test(text)) return false;
  let host: string;
  try {
    host = new URL(text).hostname;
  } catch {
    return false;
  }
  if (host === 'localhost') return true;
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(host) || host.startsWith('[')) return true;
  const last = host.split('.').pop() ?? '';
  return host.includes('.') && /^[a-z]{2,}$/i.test(last);
}
