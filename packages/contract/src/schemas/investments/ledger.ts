/** The investments API's schemas (docs/investments.md): transactions (the money and units ledgers) and reports. */
export {};
