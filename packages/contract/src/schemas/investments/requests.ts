/** The investments API's schemas (docs/investments.md): requests (orders): buy by amount, sell by units, list, get, cancel. */
export {};
