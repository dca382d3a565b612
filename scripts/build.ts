/**
 * Builds dist/edgeplane (this machine's architecture) and a cross-compiled dist/edgeplane-linux-arm64 (or -x64 on
 * an arm64 machine): self-contained executables (`Bun.build` with `compile`), native addons embedded.
 * lmdb, msgpackr-extract and @node-rs/argon2 find their `.node` files at run time by searching package
 * directories, which do not exist inside the binary; the plugin below turns each of those searches into a
 * static `require` of the addon so Bun embeds it. Run with `bun run build`; the unit tests import the rewrites.
 * For the other architecture the addons come from that architecture's platform packages, installed with
 * `bun install --cpu=… --os=linux` into node_modules/.cache/edgeplane-addons/ at the versions the libraries pin.
 */
import type { BunPlugin } from 'bun'
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'

/** A loader this build rewrites, and where its text must contain the pattern. */
export type AddonLoader = 'lmdb' | 'msgpackr-extract' | 'argon2'

/** Thrown when a library's loader no longer looks the way the rewrite expects, or its addon is missing. */
export class NativeAddonError extends Error {
  override name = 'NativeAddonError'
}

const ROOT = resolve(import.meta.dir, '..')

/** The platform the addons are chosen for: the build machine's. Only glibc Linux is packaged today. */
export interface AddonPlatform {
  platform: string
  arch: string
}

function hostPlatform(): AddonPlatform {
  return { platform: process.platform, arch: process.arch }
}

function assertSupported({ platform, arch }: AddonPlatform): void {
  if (platform !== 'linux' || (arch !== 'x64' && arch !== 'arm64')) {
    throw new NativeAddonError(
      `building the binary is supported on glibc Linux x64/arm64 only, not ${platform}-${arch}: ` +
        'the addon file names below assume it (node.napi.glibc.node, *-gnu)',
    )
  }
}

function packageDir(name: string, fromDir: string): string {
  let pkgJson: string
  try {
    pkgJson = Bun.resolveSync(`${name}/package.json`, fromDir)
  } catch (e) {
    throw new NativeAddonError(
      `cannot find package ${name} from ${fromDir} (is it installed? run 'bun install'): ${(e as Error).message}`,
    )
  }
  return dirname(pkgJson)
}

function existingFile(path: string, what: string): string {
  if (!existsSync(path) || !statSync(path).isFile()) {
    throw new NativeAddonError(`${what}: expected the native addon at ${path}, but there is no such file`)
  }
  return path
}

/** The lmdb addon for this platform, resolved from lmdb's own package directory. */
export function lmdbAddonPath(lmdbDir: string, p: AddonPlatform = hostPlatform()): string {
  assertSupported(p)
  const dir = packageDir(`@lmdb/lmdb-${p.platform}-${p.arch}`, lmdbDir)
  return existingFile(join(dir, 'node.napi.glibc.node'), 'lmdb')
}

/** The msgpackr-extract addon for this platform, resolved from msgpackr-extract's package directory. */
export function msgpackrExtractAddonPath(extractDir: string, p: AddonPlatform = hostPlatform()): string {
  assertSupported(p)
  const dir = packageDir(`@msgpackr-extract/msgpackr-extract-${p.platform}-${p.arch}`, extractDir)
  return existingFile(join(dir, 'node.napi.glibc.node'), 'msgpackr-extract')
}

/** The @node-rs/argon2 addon for this platform: the `main` of its `-gnu` platform package. */
export function argon2AddonPath(argon2Dir: string, p: AddonPlatform = hostPlatform()): string {
  assertSupported(p)
  const dir = packageDir(`@node-rs/argon2-${p.platform}-${p.arch}-gnu`, argon2Dir)
  const main = (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { main?: unknown }).main
  if (typeof main !== 'string' || !main.endsWith('.node')) {
    throw new NativeAddonError(`argon2: ${dir}/package.json has no "main" naming a .node file (found ${String(main)})`)
  }
  return existingFile(join(dir, main), 'argon2')
}

/** Where the three loaders and their addons are, seen from a project root (used by the tests). */
export function resolveLoaders(root: string = ROOT): Record<AddonLoader, { loaders: string[]; addon: string }> {
  const lmdbDir = packageDir('lmdb', root)
  const extractDir = packageDir('msgpackr-extract', packageDir('msgpackr', lmdbDir))
  const argon2Dir = packageDir('@node-rs/argon2', root)
  return {
    lmdb: { loaders: [join(lmdbDir, 'native.js'), join(lmdbDir, 'dist', 'index.cjs')], addon: lmdbAddonPath(lmdbDir) },
    'msgpackr-extract': { loaders: [join(extractDir, 'index.js')], addon: msgpackrExtractAddonPath(extractDir) },
    argon2: { loaders: [join(argon2Dir, 'index.js')], addon: argon2AddonPath(argon2Dir) },
  }
}

function staticRequire(addonPath: string): string {
  return `require(${JSON.stringify(addonPath)})`
}

function replaceExactlyOnce(source: string, pattern: RegExp, replacement: string, what: string): string {
  const global = new RegExp(pattern.source, pattern.flags.includes('g') ? pattern.flags : pattern.flags + 'g')
  const hits = source.match(global)?.length ?? 0
  if (hits !== 1) {
    throw new NativeAddonError(
      `${what}: expected exactly one match of ${pattern} but found ${hits}; ` +
        'the library changed how it loads its native addon, so the binary would not find it. ' +
        'Update the rewrite in scripts/build.ts for the new version.',
    )
  }
  return source.replace(pattern, () => replacement)
}

/**
 * lmdb `native.js` / `dist/index.cjs`: `loadNAPI(dirName)` (or the CJS interop form
 * `loadNAPI__default["default"](dirName)`) searches lmdb's directory at run time; make it a static require.
 */
export function rewriteLmdbLoader(source: string, addonPath: string, file = 'lmdb loader'): string {
  return replaceExactlyOnce(
    source,
    /\bloadNAPI(?:__default\[["']default["']\])?\(dirName\)/,
    staticRequire(addonPath),
    file,
  )
}

/** msgpackr-extract `index.js`: `require('node-gyp-build-optional-packages')(__dirname)` → static require. */
export function rewriteMsgpackrExtractLoader(source: string, addonPath: string, file = 'msgpackr-extract index.js'): string {
  return replaceExactlyOnce(
    source,
    /\brequire\((["'])node-gyp-build-optional-packages\1\)\(__dirname\)/,
    staticRequire(addonPath),
    file,
  )
}

/**
 * @node-rs/argon2 `index.js`: `requireNative()` tries NAPI_RS_NATIVE_LIBRARY_PATH, a local file and the
 * platform packages (after a libc probe that reads /usr/bin/ldd). Make it return the embedded addon first;
 * the rest of its body becomes unreachable and the minifier drops it.
 */
export function rewriteArgon2Loader(source: string, addonPath: string, file = '@node-rs/argon2 index.js'): string {
  return replaceExactlyOnce(
    source,
    /\bfunction requireNative\(\)\s*\{/,
    `function requireNative() {\n  return ${staticRequire(addonPath)}\n`,
    file,
  )
}

const SEP = String.raw`[\\/]`
const LOADER_FILTERS: Record<AddonLoader, RegExp> = {
  lmdb: new RegExp(`${SEP}node_modules${SEP}lmdb${SEP}(?:native\\.js|dist${SEP}index\\.cjs)$`),
  'msgpackr-extract': new RegExp(`${SEP}node_modules${SEP}msgpackr-extract${SEP}index\\.js$`),
  argon2: new RegExp(`${SEP}node_modules${SEP}@node-rs${SEP}argon2${SEP}index\\.js$`),
}

/** What the plugin rewrote during one build: loader file → embedded addon. */
export type RewriteLog = Map<string, { loader: AddonLoader; addon: string }>

/**
 * The Bun.build plugin. Each loader's addon is resolved from that loader's own package directory, so a
 * nested second copy of a library gets its own matching addon.
 */
export function nativeAddonPlugin(
  log: RewriteLog = new Map(),
  platform: AddonPlatform = hostPlatform(),
  /** Where the platform packages are found when they are not beside the libraries (a cross build). */
  addonSearchDir?: string,
): BunPlugin {
  return {
    name: 'edgeplane-native-addons',
    setup(build) {
      build.onLoad({ filter: LOADER_FILTERS.lmdb }, async ({ path }) => {
        const lmdbDir = path.endsWith('index.cjs') ? dirname(dirname(path)) : dirname(path)
        const addon = lmdbAddonPath(addonSearchDir ?? lmdbDir, platform)
        log.set(path, { loader: 'lmdb', addon })
        return { contents: rewriteLmdbLoader(await Bun.file(path).text(), addon, path), loader: 'js' }
      })
      build.onLoad({ filter: LOADER_FILTERS['msgpackr-extract'] }, async ({ path }) => {
        const addon = msgpackrExtractAddonPath(addonSearchDir ?? dirname(path), platform)
        log.set(path, { loader: 'msgpackr-extract', addon })
        return { contents: rewriteMsgpackrExtractLoader(await Bun.file(path).text(), addon, path), loader: 'js' }
      })
      build.onLoad({ filter: LOADER_FILTERS.argon2 }, async ({ path }) => {
        const addon = argon2AddonPath(addonSearchDir ?? dirname(path), platform)
        log.set(path, { loader: 'argon2', addon })
        return { contents: rewriteArgon2Loader(await Bun.file(path).text(), addon, path), loader: 'js' }
      })
    },
  }
}

/** Git short hash of HEAD in `cwd`, or 'unknown' outside a checkout or without git. */
export function gitRevision(cwd: string = ROOT): string {
  try {
    const r = Bun.spawnSync(['git', 'rev-parse', '--short', 'HEAD'], { cwd, stdout: 'pipe', stderr: 'ignore' })
    const rev = r.stdout.toString().trim()
    return r.exitCode === 0 && /^[0-9a-f]{4,40}$/.test(rev) ? rev : 'unknown'
  } catch {
    return 'unknown'
  }
}

export interface BuildOptions {
  entry: string
  outfile: string
  /** Loaders that must have been rewritten, or the build fails (the binary would not start elsewhere). */
  require: AddonLoader[]
  bytecode: boolean
  /** The architecture of the binary (default this machine's); another one is a cross build. */
  arch?: 'x64' | 'arm64'
}

/** The library packages whose platform packages carry the addons, and each platform package's name. */
const PLATFORM_PACKAGES: { library: string; from: string[]; name: (arch: string) => string }[] = [
  { library: 'lmdb', from: [], name: (arch) => `@lmdb/lmdb-linux-${arch}` },
  { library: 'msgpackr-extract', from: ['lmdb', 'msgpackr'], name: (arch) => `@msgpackr-extract/msgpackr-extract-linux-${arch}` },
  { library: '@node-rs/argon2', from: [], name: (arch) => `@node-rs/argon2-linux-${arch}-gnu` },
]

/** The version of `platformPackage` that `library` (installed) pins in its optionalDependencies. */
function pinnedVersion(libraryDir: string, platformPackage: string): string {
  const pkg = JSON.parse(readFileSync(join(libraryDir, 'package.json'), 'utf8')) as { optionalDependencies?: Record<string, string> }
  const version = pkg.optionalDependencies?.[platformPackage]
  if (!version) throw new NativeAddonError(`${libraryDir}/package.json does not pin ${platformPackage} in optionalDependencies`)
  return version
}

/**
 * Installs the platform packages of `arch` (Linux, glibc) at the versions the installed libraries pin, into a cache
 * directory of their own; answers that directory (the plugin resolves the addons from it). Reused when complete.
 */
export function installCrossAddons(arch: 'x64' | 'arm64', root: string = ROOT): string {
  const dir = join(root, 'node_modules', '.cache', 'edgeplane-addons', `linux-${arch}`)
  const dependencies: Record<string, string> = {}
  for (const p of PLATFORM_PACKAGES) {
    let from = root
    for (const parent of p.from) from = packageDir(parent, from)
    dependencies[p.name(arch)] = pinnedVersion(packageDir(p.library, from), p.name(arch))
  }
  const installed = Object.entries(dependencies).every(([name, version]) => {
    const pkg = join(dir, 'node_modules', name, 'package.json')
    return existsSync(pkg) && (JSON.parse(readFileSync(pkg, 'utf8')) as { version?: string }).version === version
  })
  if (installed) return dir
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: `edgeplane-addons-linux-${arch}`, private: true, dependencies }, null, 2))
  const r = Bun.spawnSync([process.execPath, 'install', `--cpu=${arch}`, '--os=linux', '--no-save'], { cwd: dir, stdout: 'pipe', stderr: 'pipe' })
  if (r.exitCode !== 0) {
    throw new NativeAddonError(`installing the linux-${arch} addons (${Object.keys(dependencies).join(', ')}) failed:\n${r.stderr.toString()}`)
  }
  return dir
}

/** Compiles `entry` into `outfile` and returns what was embedded. Throws on any build or rewrite failure. */
export async function buildBinary(opts: BuildOptions): Promise<RewriteLog> {
  const log: RewriteLog = new Map()
  const host = hostPlatform()
  const arch = opts.arch ?? (host.arch as 'x64' | 'arm64')
  const cross = arch !== host.arch
  const result = await Bun.build({
    entrypoints: [opts.entry],
    compile: {
      outfile: opts.outfile,
      target: `bun-linux-${arch}`,
      // A server binary behaves the same in any directory: no .env or bunfig.toml from its cwd.
      autoloadDotenv: false,
      autoloadBunfig: false,
    },
    target: 'bun',
    format: 'esm',
    minify: true,
    // bytecode is made by this machine's JavaScriptCore; a cross build goes without (it only shortens the start)
    bytecode: opts.bytecode && !cross,
    define: {
      EDGEPLANE_BUILD_REVISION: JSON.stringify(gitRevision()),
      EDGEPLANE_BUILD_DATE: JSON.stringify(new Date().toISOString()),
    },
    plugins: [nativeAddonPlugin(log, { platform: 'linux', arch }, cross ? installCrossAddons(arch) : undefined)],
    throw: false,
  })
  if (!result.success) {
    const messages = result.logs.map((l) => `  ${String(l)}`).join('\n')
    throw new Error(`bun build of ${opts.entry} failed:\n${messages}`)
  }
  const seen = new Set([...log.values()].map((v) => v.loader))
  const missing = opts.require.filter((l) => !seen.has(l))
  if (missing.length > 0) {
    throw new NativeAddonError(
      `the bundle never loaded the addon loader of ${missing.join(', ')}, so its addon was not embedded ` +
        '(the import path or file layout of the library changed?); see LOADER_FILTERS in scripts/build.ts',
    )
  }
  return log
}

/** ELF e_machine of each architecture (x86-64, AArch64). */
const ELF_MACHINE = { x64: 0x3e, arm64: 0xb7 } as const

/** Throws unless `file` is a 64-bit little-endian ELF executable for `arch`. */
export function assertElfFor(file: string, arch: 'x64' | 'arm64'): void {
  const head = readFileSync(file).subarray(0, 20)
  const isElf64Le = head.length === 20 && head.readUInt32BE(0) === 0x7f454c46 && head[4] === 2 && head[5] === 1
  const machine = isElf64Le ? head.readUInt16LE(18) : -1
  if (machine !== ELF_MACHINE[arch]) {
    throw new NativeAddonError(`${file} is not a linux-${arch} executable (ELF machine ${machine === -1 ? 'none' : `0x${machine.toString(16)}`})`)
  }
}

/** The architectures a build produces: this machine's first (dist/edgeplane), then the other Linux one. */
const ARCHES = ['x64', 'arm64'] as const

/**
 * The builds of one `bun run build`: without `--arch`, this machine's architecture to `--outfile` (dist/edgeplane)
 * and the other architecture, cross-compiled, beside it (dist/edgeplane-linux-arm64 on x64); with `--arch`, that one.
 */
function parseCli(argv: string[]): BuildOptions[] {
  const opts: BuildOptions = {
    entry: join(ROOT, 'src', 'main.ts'),
    outfile: join(ROOT, 'dist', 'edgeplane'),
    require: ['lmdb', 'msgpackr-extract', 'argon2'],
    bytecode: true,
  }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    const value = (): string => {
      const v = argv[++i]
      if (v === undefined) throw new Error(`${arg} needs a value`)
      return v
    }
    if (arg === '--entry') opts.entry = resolve(value())
    else if (arg === '--outfile') opts.outfile = resolve(value())
    else if (arg === '--no-bytecode') opts.bytecode = false
    else if (arg === '--require') opts.require = value().split(',').filter(Boolean) as AddonLoader[]
    else if (arg === '--arch') {
      const arch = value()
      if (arch !== 'x64' && arch !== 'arm64') throw new Error(`--arch ${arch}: x64 or arm64`)
      opts.arch = arch
    } else throw new Error(`unknown argument ${arg} (known: --entry FILE, --outfile FILE, --no-bytecode, --require a,b, --arch x64|arm64)`)
  }
  if (opts.arch !== undefined) return [opts]
  const host = hostPlatform().arch
  const other = ARCHES.filter((a) => a !== host)
  return [{ ...opts, arch: host as 'x64' | 'arm64' }, ...other.map((arch) => ({ ...opts, arch, outfile: `${opts.outfile}-linux-${arch}` }))]
}

if (import.meta.main) {
  try {
    for (const opts of parseCli(process.argv.slice(2))) {
      const started = performance.now()
      const log = await buildBinary(opts)
      assertElfFor(opts.outfile, opts.arch ?? (hostPlatform().arch as 'x64' | 'arm64'))
      for (const [file, { loader, addon }] of log) {
        console.log(`embedded ${loader}: ${relative(ROOT, file)} -> ${relative(ROOT, addon)}`)
      }
      const sizeMiB = (statSync(opts.outfile).size / 1024 / 1024).toFixed(1)
      const ms = Math.round(performance.now() - started)
      console.log(`built ${relative(process.cwd(), opts.outfile) || opts.outfile} for linux-${opts.arch} (${sizeMiB} MiB) in ${ms} ms`)
    }
  } catch (e) {
    console.error(`build failed: ${e instanceof Error ? e.message : String(e)}`)
    process.exit(1)
  }
}
