/** The investments API's schemas (docs/investments.md): accounts, their assets and portfolio valuation. */
export {};
