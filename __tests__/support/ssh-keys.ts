/**
 * SSH keys for the tests, made here with Node.js's crypto (no private key is kept in the repository):
 * public keys in OpenSSH's one-line form, and blobs of the SSH wire format (RFC 4253) for keys that
 * no tool makes, such as an RSA key of a size EC2 refuses.
 */
import { generateKeyPairSync, KeyObject } from "crypto";

/** An SSH wire-format string: its length (32 bits, big-endian), then its bytes. */
export function wireString(bytes: Buffer | string): Buffer {
  const data = Buffer.from(bytes);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  return Buffer.concat([length, data]);
}

/** An SSH mpint: a positive number's big-endian bytes, with a zero byte in front when the top bit is set. */
function mpint(bytes: Buffer): Buffer {
  return wireString((bytes[0] & 0x80) !== 0 ? Buffer.concat([Buffer.from([0]), bytes]) : bytes);
}

/** The OpenSSH public key line of a type and blob. */
export function keyLine(type: string, blob: Buffer, comment = "admin@example"): string {
  return `${type} ${blob.toString("base64")}${comment ? ` ${comment}` : ""}`;
}

/** The blob of an RSA key of exponent `e` and modulus `n`. */
export function rsaBlob(e: Buffer, n: Buffer): Buffer {
  return Buffer.concat([wireString("ssh-rsa"), mpint(e), mpint(n)]);
}

function publicBlob(key: KeyObject): { type: string; blob: Buffer } {
  const jwk = key.export({ format: "jwk" });
  const bytes = (field: string | undefined) => Buffer.from(field ?? "", "base64url");
  if (jwk.kty === "OKP")
    return { type: "ssh-ed25519", blob: Buffer.concat([wireString("ssh-ed25519"), wireString(bytes(jwk.x))]) };
  if (jwk.kty === "RSA") return { type: "ssh-rsa", blob: rsaBlob(bytes(jwk.e), bytes(jwk.n)) };
  const point = Buffer.concat([Buffer.from([4]), bytes(jwk.x), bytes(jwk.y)]);
  return {
    type: "ecdsa-sha2-nistp256",
    blob: Buffer.concat([wireString("ecdsa-sha2-nistp256"), wireString("nistp256"), wireString(point)]),
  };
}

/** A new key pair: its public key's line, and its private key in PEM (PKCS#8, as openssl writes it). */
export function newKey(
  kind: "ed25519" | "rsa" | "ecdsa",
  bits = 2048,
  comment?: string,
): { line: string; blob: Buffer; privatePem: string } {
  const { publicKey, privateKey } =
    kind === "ed25519"
      ? generateKeyPairSync("ed25519")
      : kind === "rsa"
        ? generateKeyPairSync("rsa", { modulusLength: bits })
        : generateKeyPairSync("ec", { namedCurve: "P-256" });
  const { type, blob } = publicBlob(publicKey);
  return {
    line: keyLine(type, blob, comment),
    blob,
    privatePem: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
  };
}
