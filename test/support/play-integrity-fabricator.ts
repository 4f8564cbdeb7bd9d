/** The fabricator lives in tools/ (test and demo tooling, outside the service); tests import it from here. */
export * from '../../tools/play-integrity-fabricator/fabricator.js';
