"""mkdocs hook: add the reference pages generated from the code to the site.

They are generated at every build (`pypto_mlir.docgen.reference_pages`), never
committed, so they cannot go stale. This file is excluded from the site
(`exclude_docs` in mkdocs.yml).
"""

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files

from pypto_mlir.docgen import reference_pages


def on_files(files: Files, config: MkDocsConfig) -> Files:
    for path, text in reference_pages().items():
        if files.get_file_from_path(path) is not None:
            raise PluginError(
                f"docs/{path} is generated from the code: delete the file"
            )
        files.append(File.generated(config, path, content=text))
    return files
