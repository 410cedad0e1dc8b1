// esbuild bundles imported CSS into app.css; TypeScript only needs to know the import is fine.
declare module "*.css";
