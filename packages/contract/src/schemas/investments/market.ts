/** The investments API's schemas (docs/investments.md): investment types, instruments and their prices (read-only). */
export {};
