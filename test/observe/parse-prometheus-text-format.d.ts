/** The parser ships no types: it returns prom2json's shape (metric families with string values). */
declare module 'parse-prometheus-text-format' {
  export default function parsePrometheusTextFormat(text: string): unknown[];
}
