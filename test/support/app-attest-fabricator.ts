/** The fabricator ships with the service (the bench and the README tour use it); tests import it from here. */
export * from '../../src/attestation/app-attest/fabricator.js';
