/**
 * Rows for shell-expand.test.ts, in the tokens of shell-writes-table.ts
 * (`<certainty><mode>:<path>`, `ro`, `unread`). The checkout is /repo, the
 * home folder /home/me; a peer holds src/peer.ts and src/held/. Every row
 * is a form an agent refused once tries next: each was misread before
 * (a write only caught after the call, or a read or a script taken for a
 * write).
 */

export const ROOT = "/repo";
export const HOME = "/home/me";
export type Row = [command: string, expected: string, cwd?: string];

/** What a shell expands before it runs, where the line decides it: named targets. */
export const STATIC_ROWS: Row[] = [
  // The directory and the checkout.
  ['echo x > "$PWD/src/peer.ts"', "nw:src/peer.ts"],
  ["echo x > ${PWD}/src/peer.ts", "nw:src/peer.ts"],
  ['echo x > "$(pwd)/src/peer.ts"', "nw:src/peer.ts"],
  ["echo x > `pwd`/src/peer.ts", "nw:src/peer.ts"],
  ['cd src && echo x > "$PWD/peer.ts"', "nw:src/peer.ts"],
  ['cd src && rm "$(pwd)/held/x.ts"', "nr:src/held/x.ts"],
  ['cd src/held && sed -i s/a/b/ "$(pwd -P)/x.ts"', "nw:src/held/x.ts"],
  ['echo x > "$(git rev-parse --show-toplevel)/src/peer.ts"', "nw:src/peer.ts", "/repo/docs"],
  ['cp a.ts "$(dirname src/held/x.ts)/"', "nr:src/held/a.ts"],
  // The home folder: outside this checkout, inside one under it (HOME_ROWS).
  ["rm ~/notes.md", "nr:/home/me/notes.md"],
  ['echo x > "$HOME/.bashrc"', "nw:/home/me/.bashrc"],
  // Braces.
  ["rm src/{peer,free}.ts", "nr:src/peer.ts nr:src/free.ts"],
  ["echo x | tee src/held/{a,b}.ts", "nw:src/held/a.ts nw:src/held/b.ts"],
  ["touch src/held/f{1..3}.ts", "nw:src/held/f1.ts nw:src/held/f2.ts nw:src/held/f3.ts"],
  ["touch src/held/{a..c}.ts", "nw:src/held/a.ts nw:src/held/b.ts nw:src/held/c.ts"],
  ["rm src/{held/x,lib/y}.ts", "nr:src/held/x.ts nr:src/lib/y.ts"],
  ["rm src/{held/{a,b},lib}.ts", "nr:src/held/a.ts nr:src/held/b.ts nr:src/lib.ts"],
  // Braces that make no list stay literal, a run-time word as before (find's and xargs's {}).
  ["rm src/{peer,free}.ts src/{x}.ts", "nr:src/peer.ts nr:src/free.ts ur:~src/{x}.ts"],
  // A for loop's words: the command runs once for each.
  ['for f in src/peer.ts src/x.ts; do echo x > "$f"; done', "nw:src/peer.ts nw:src/x.ts"],
  ["for f in src/held/a.ts; do sed -i 's/a/b/' $f; done", "nw:src/held/a.ts"],
  ['for d in src/held lib; do rm -rf "$d"; done', "nr:src/held nr:lib"],
  [
    "for f in a b; do cp x.ts src/held/$f.ts; done",
    "nw:src/held/a.ts ur:src/held/a.ts/x.ts nw:src/held/b.ts ur:src/held/b.ts/x.ts",
  ],
  ["for f in src/{peer,x}.ts; do rm $f; done", "nr:src/peer.ts nr:src/x.ts"],
  // Variables the line assigned.
  ["f=src/peer.ts; echo x > $f", "nw:src/peer.ts"],
  ['F=src/peer.ts && rm "$F"', "nr:src/peer.ts"],
  ["export F=src/held/x.ts; touch $F", "nw:src/held/x.ts"],
  ['dir=src/held; mv x.ts "$dir/"', "nr:src/held/x.ts nr:x.ts"],
  ["d=$(pwd)/src; rm $d/peer.ts", "nr:src/peer.ts"],
  ['p="$PWD/src/peer.ts"; : > "$p"', "nw:src/peer.ts"],
  ["a=src; b=$a/held; rm -r $b", "nr:src/held"],
  ["f=~/x.ts; rm $f", "nr:/home/me/x.ts"],
  ["files='src/peer.ts src/held/x.ts'; rm $files", "nr:src/peer.ts nr:src/held/x.ts"],
  ['f=src/peer.ts; sh -c "echo x > $f"', "nw:src/peer.ts"],
  ["export F=src/peer.ts; bash -c 'rm $F'", "nr:src/peer.ts"],
  // A substitution whose output the line shows.
  ["f=$(echo src/peer.ts); rm $f", "nr:src/peer.ts"],
  ['rm "$(echo src/held/x.ts)"', "nr:src/held/x.ts"],
  ["rm $(printf '%s' src/peer.ts)", "nr:src/peer.ts"],
  // Positional parameters of sh -c.
  ["sh -c 'echo x > \"$1\"' _ src/peer.ts", "nw:src/peer.ts"],
  [
    'bash -c \'for f in "$@"; do rm "$f"; done\' _ src/peer.ts src/held/x.ts',
    "nr:src/peer.ts nr:src/held/x.ts",
  ],
  ["sudo sh -c 'rm \"$1\"' sh src/peer.ts", "nr:src/peer.ts"],
  // Here-strings and a literal script piped into a shell.
  ["sh <<< 'echo x > src/peer.ts'", "nw:src/peer.ts"],
  ['bash <<<"rm src/held/x.ts"', "nr:src/held/x.ts"],
  ["echo 'echo x > src/peer.ts' | sh", "nw:src/peer.ts"],
  ["printf 'rm %s\\n' src/peer.ts | bash", "nr:src/peer.ts"],
  ['echo "rm src/held/x.ts" | sudo bash', "nr:src/held/x.ts"],
  ["printf '%s\\n' 'echo x >> src/peer.ts' | zsh -s", "na:src/peer.ts"],
  ["echo \"open('src/peer.ts','w').write('x')\" | python3", "uw:src/peer.ts"],
  ['sh -c "$(echo rm src/peer.ts)"', "nr:src/peer.ts"],
  // An archive's or a program's output folder: all below it.
  ["tar -xf a.tar -C src/held", "nt:src/held"],
  ["tar xzf a.tgz -C src/held", "nt:src/held"],
  ["tar -xzf a.tgz --directory=src/held", "nt:src/held"],
  ["tar --extract --file a.tar --directory src/held", "nt:src/held"],
  ["tar -xf a.tar src/peer.ts", "nw:src/peer.ts"],
  ["unzip a.zip -d src/held", "nt:src/held"],
  ["unzip -o -q a.zip -d src/held", "nt:src/held"],
  ["unzip a.zip src/peer.ts", "nw:src/peer.ts"],
  ["7z x a.7z -osrc/held", "nt:src/held"],
  ["tsc --outDir src/held", "nt:src/held"],
  ["tsc -p . --outdir src/held", "nt:src/held"],
  ["esbuild src/a.ts --bundle --outdir=src/held", "nt:src/held"],
  ["esbuild a.ts --outfile=src/peer.js", "nw:src/peer.js"],
  ["npx esbuild a.ts --outfile src/peer.js", "nw:src/peer.js"],
  ["protoc --ts_out=src/held api.proto", "nt:src/held"],
  ["protoc --grpc_out=generate_mock_code=true:src/held api.proto", "nt:src/held"],
  ["protoc --python_out src/held -I. api.proto", "nt:src/held"],
  ["babel src -d src/held", "nt:src/held"],
  ["rollup -c -o src/peer.js", "nw:src/peer.js"],
  ["gcc x.c -o src/held/bin", "nw:src/held/bin"],
  ["javac -d src/held X.java", "nt:src/held"],
  ["cargo build --target-dir src/held", "nt:src/held"],
  ["pip install -t src/held requests", "nt:src/held"],
  ["python -m build --outdir src/held", "nt:src/held"],
  ["pandoc a.md -o src/peer.html", "nw:src/peer.html"],
  ["openssl enc -d -in x.enc -out src/peer.ts", "nw:src/peer.ts"],
  ["npm pack --pack-destination src/held", "nt:src/held"],
  ["git clone https://github.com/a/b.git src/held", "nt:src/held"],
  ["git clone https://github.com/a/held.git", "nt:src/held", "/repo/src"],
  ["git worktree add src/held/wt main", "nt:src/held/wt"],
  ["git submodule add https://github.com/a/y.git src/held/y", "nt:src/held/y"],
  ["git archive -o src/held/a.zip HEAD", "nw:src/held/a.zip"],
  ["git format-patch -o src/held HEAD~1", "nt:src/held"],
  ["gh repo clone a/b src/held", "nt:src/held"],
  ["docker cp web:/app/out src/held", "nt:src/held"],
  ["mytool --out-dir=src/held", "uw:src/held"],
];

/** With the checkout under the home folder: ~ and $HOME lead into it. */
export const HOME_ROWS: Row[] = [
  ["echo x > ~/repo/src/peer.ts", "nw:src/peer.ts"],
  ['rm "$HOME/repo/src/held/x.ts"', "nr:src/held/x.ts"],
  ['cp a.ts "${HOME}/repo/src/held/"', "nr:src/held/a.ts"],
  ["cd ~/repo/src && rm peer.ts", "nr:src/peer.ts"],
];

/** Programs whose options or scripts write a file: named. */
export const PROGRAM_ROWS: Row[] = [
  ["sed -n 'w src/peer.ts' docs/guide.md", "nw:src/peer.ts"],
  ["sed 's/a/b/w src/held/changes.txt' docs/guide.md", "nw:src/held/changes.txt"],
  ["sed -n -e '/x/W src/peer.ts' docs/guide.md", "nw:src/peer.ts"],
  ["sed '1e rm src/peer.ts' docs/guide.md", "nr:src/peer.ts"],
  ["sed -i -e 's/a/b/w src/held/log' src/mine.ts", "nw:src/mine.ts nw:src/held/log"],
  ["curl -s -D src/held/x.ts https://example.com", "nw:src/held/x.ts"],
  ["curl -sSLD src/held/h.txt https://example.com", "nw:src/held/h.txt"],
  ["curl --dump-header=src/peer.ts https://example.com", "nw:src/peer.ts"],
  ["curl -c src/peer.ts https://example.com", "nw:src/peer.ts"],
  ["curl --cookie-jar src/peer.ts https://example.com", "nw:src/peer.ts"],
  ["curl --trace-ascii src/held/t.txt https://example.com", "nw:src/held/t.txt"],
  ["curl --trace src/held/t.bin https://example.com", "nw:src/held/t.bin"],
  ["curl --stderr src/peer.ts https://example.com", "nw:src/peer.ts"],
  ["curl --libcurl src/peer.c https://example.com", "nw:src/peer.c"],
  ["curl -O https://example.com/peer.ts", "uw:src/peer.ts", "/repo/src"],
  ["curl -O --output-dir src/held https://example.com/a.ts", "uw:src/held/a.ts"],
  ["wget -o src/held/log.txt https://example.com", "nw:src/held/log.txt uw:index.html"],
  ["wget -a src/peer.ts https://example.com", "na:src/peer.ts uw:index.html"],
  ["wget -P src/held https://example.com/y.tgz", "nt:src/held uw:src/held/y.tgz"],
  ["wget https://example.com/peer.ts", "uw:src/peer.ts", "/repo/src"],
  ["xxd -r dump.hex src/peer.ts", "nw:src/peer.ts"],
  ["split -l 100 big.txt src/held/part", "nw:src/held/part*"],
  ["csplit -f src/held/p x.txt /a/", "nw:src/held/p*"],
  ["base64 -d -o src/peer.ts x.b64", "nw:src/peer.ts"],
  ['sqlite3 data/app.db ".output src/held/dump.sql" ".dump"', "uw:data/app.db nw:src/held/dump.sql"],
  ["sqlite3 app.db '.once src/peer.ts' 'select 1'", "uw:app.db nw:src/peer.ts"],
  ["sqlite3 app.db '.shell rm src/peer.ts'", "uw:app.db nr:src/peer.ts"],
  ["sqlite3 app.db <<'EOF'\n.output src/peer.ts\nselect 1;\nEOF", "uw:app.db nw:src/peer.ts"],
  ["awk '{ print > \"src/peer.ts\" }' in.txt", "nw:src/peer.ts"],
  ["awk '{ print $0 >> \"src/held/log\" }' in.txt", "na:src/held/log"],
  ["awk 'BEGIN { system(\"rm src/peer.ts\") }'", "nr:src/peer.ts"],
  ["awk '{ print | \"cat > src/peer.ts\" }' in.txt", "nw:src/peer.ts"],
];

/** One-liners that read a held file and write elsewhere: only the other file may be written. */
export const READ_LITERAL_ROWS: Row[] = [
  [
    `node -e "const s=require('fs').readFileSync('src/peer.ts','utf8'); require('fs').writeFileSync('out.txt', s)"`,
    "uw:out.txt",
  ],
  [`node -e "fs.writeFileSync('out.txt', fs.readFileSync('src/held/x.ts'))"`, "uw:out.txt"],
  [`node -e "require('fs').copyFileSync('src/held/x.ts', 'copy.ts')"`, "uw:copy.ts"],
  [`node -e "fs.createReadStream('src/peer.ts').pipe(fs.createWriteStream('o.txt'))"`, "uw:o.txt"],
  [`python3 -c "d=open('src/peer.ts').read(); open('out.txt','w').write(d)"`, "uw:out.txt"],
  [`python3 -c "d=open('src/peer.ts', 'r').read(); open('out.txt','w').write(d)"`, "uw:out.txt"],
  [`python3 -c "d=open('src/peer.ts', encoding='utf8').read(); open('out.txt','w').write(d)"`, "uw:out.txt"],
  [`python3 -c "import shutil; shutil.copy('src/peer.ts', 'out.ts')"`, "uw:out.ts"],
  [
    `python3 -c "from pathlib import Path; Path('out.txt').write_text(Path('src/peer.ts').read_text())"`,
    "uw:out.txt",
  ],
  [`python3 -c "import os,shutil; shutil.copy(os.path.join('src', 'peer.ts'), 'o.ts')"`, "uw:o.ts"],
  [
    `python3 -c "import json; json.dump(json.load(open('src/held/c.json')), open('out.json','w'))"`,
    "uw:out.json",
  ],
  // A mode the script computes may write: the literal stays uncertain; the read one does not.
  [`python3 -c "open('src/peer.ts', m).write(open('src/held/x.ts').read())"`, "uw:src/peer.ts"],
  [`perl -e 'open(my $i, "<", "src/peer.ts"); open(my $o, ">", "out.txt"); print $o <$i>'`, "uw:out.txt"],
  [`perl -e 'open(I, "src/peer.ts"); open(O, ">out.txt"); print O <I>'`, "uw:out.txt"],
  [`ruby -e 'File.write("out.txt", File.read("src/peer.ts"))'`, "uw:out.txt"],
  [`php -r "file_put_contents('out.txt', file_get_contents('src/peer.ts'));"`, "uw:out.txt"],
];

/** Editor scripts are not files: only the file edited is held. */
export const EDITOR_ROWS: Row[] = [
  ["vim -es -c '%s/a/b/' -c wq src/mine.ts", "nw:src/mine.ts"],
  ["nvim --headless -c '%s/x/y/g' -c 'wq' src/mine.ts", "nw:src/mine.ts"],
  ["vi -c ':1,$s/x/y/' -c ':wq' src/mine.ts", "nw:src/mine.ts"],
  ["ex -s -c '%s/a/b/g|x' src/mine.ts", "nw:src/mine.ts"],
  ["vim --cmd 'set nobackup' -c 'normal gg=G' -c x src/mine.ts", "nw:src/mine.ts"],
  ["vim -S fix.vim src/mine.ts", "nw:src/mine.ts"],
  ["vim -u NONE -c wq src/mine.ts", "nw:src/mine.ts"],
  ["nvim --headless -c 'w src/peer.ts' -c q src/mine.ts", "nw:src/mine.ts nw:src/peer.ts"],
  ["vim -es -c 'w >> src/held/log.txt' -c q src/mine.ts", "na:src/held/log.txt nw:src/mine.ts"],
  ["vim -c '!rm src/peer.ts' -c q src/mine.ts", "nr:src/peer.ts nw:src/mine.ts"],
  [
    "emacs --batch src/mine.el --eval '(indent-region (point-min) (point-max))' -f save-buffer",
    "nw:src/mine.el",
  ],
  ["nano -T 4 src/mine.ts", "nw:src/mine.ts"],
  ["ed -s src/mine.ts <<'EOF'\n,s/a/b/g\nw src/peer.ts\nq\nEOF", "nw:src/mine.ts nw:src/peer.ts"],
];
