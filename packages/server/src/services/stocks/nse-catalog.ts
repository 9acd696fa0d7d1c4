import type { StockInput } from './upsert.ts';

/** Sandbox demo catalog: real Nairobi Securities Exchange tickers with plausible KES prices. */
const LISTED: [symbol: string, name: string, price: string][] = [
  ['ABSA', 'Absa Bank Kenya', '18.45'],
  ['BAMB', 'Bamburi Cement', '42.50'],
  ['BAT', 'BAT Kenya', '380.00'],
  ['BRIT', 'Britam Holdings', '6.20'],
  ['CIC', 'CIC Insurance Group', '2.35'],
  ['COOP', 'Co-operative Bank of Kenya', '16.50'],
  ['CRWN', 'Crown Paints Kenya', '37.00'],
  ['DTK', 'Diamond Trust Bank Kenya', '68.75'],
  ['EABL', 'East African Breweries', '178.25'],
  ['EQTY', 'Equity Group Holdings', '47.80'],
  ['JUB', 'Jubilee Holdings', '192.00'],
  ['KCB', 'KCB Group', '42.10'],
  ['KEGN', 'KenGen', '4.05'],
  ['KPLC', 'Kenya Power and Lighting', '7.86'],
  ['NCBA', 'NCBA Group', '52.25'],
  ['NSE', 'Nairobi Securities Exchange', '6.30'],
  ['SBIC', 'Stanbic Holdings', '140.00'],
  ['SCBK', 'Standard Chartered Bank Kenya', '285.50'],
  ['SCOM', 'Safaricom', '28.55'],
  ['TOTL', 'TotalEnergies Marketing Kenya', '21.40'],
];

export const NSE_STOCKS: StockInput[] = LISTED.map(([symbol, name, price]) => ({
  symbol,
  name,
  price,
  currency: 'KES',
}));
