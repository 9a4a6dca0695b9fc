/**
 * The page of `memdir ui` as the bundle holds it: `page/main.ts` compiled for the browser and `page/page.css`, made
 * by the `ui-assets` plugin of apps/cli/build.mjs (there is no such module outside the bundle).
 */
declare module "memdir-ui-assets" {
  export const script: string
  export const style: string
}
