// WebAuthn authenticator data as App Attest uses it:
// rpIdHash(32) | flags(1) | signCount(4, big-endian) | [aaguid(16) | credIdLen(2) | credId | COSE key] | [extensions]

const RP_ID_HASH_LENGTH = 32;
const HEADER_LENGTH = RP_ID_HASH_LENGTH + 1 + 4;
const AAGUID_LENGTH = 16;
const FLAG_ATTESTED_CREDENTIAL_DATA = 0x40;

export interface AuthenticatorData {
  rpIdHash: Buffer;
  flags: number;
  counter: number;
}

export interface AttestedAuthenticatorData extends AuthenticatorData {
  aaguid: Buffer;
  credentialId: Buffer;
}

/** The fixed header, or undefined when the buffer is too short to hold one. */
export function parseAuthenticatorData(authData: Buffer): AuthenticatorData | undefined {
  if (authData.length < HEADER_LENGTH) return undefined;
  return {
    rpIdHash: authData.subarray(0, RP_ID_HASH_LENGTH),
    flags: authData[RP_ID_HASH_LENGTH] ?? 0,
    counter: authData.readUInt32BE(RP_ID_HASH_LENGTH + 1),
  };
}

/**
 * The header plus the attested credential's aaguid and id, or undefined when they are absent or
 * truncated. The COSE key and any extensions map (flag ED) that follow are deliberately not
 * decoded: no App Attest check reads them (the key is taken from the certificate, which the keyId
 * check binds to the credential), and the nonce covers the whole buffer whatever it carries.
 */
export function parseAttestedAuthenticatorData(authData: Buffer): AttestedAuthenticatorData | undefined {
  const header = parseAuthenticatorData(authData);
  if (!header || (header.flags & FLAG_ATTESTED_CREDENTIAL_DATA) === 0) return undefined;
  const idLengthOffset = HEADER_LENGTH + AAGUID_LENGTH;
  if (authData.length < idLengthOffset + 2) return undefined;
  const idStart = idLengthOffset + 2;
  const idEnd = idStart + authData.readUInt16BE(idLengthOffset);
  if (idEnd > authData.length) return undefined;
  return {
    ...header,
    aaguid: authData.subarray(HEADER_LENGTH, idLengthOffset),
    credentialId: authData.subarray(idStart, idEnd),
  };
}
