# Writes a .cc that embeds every migrations/NNNN_*.sql as a string, so the
# server binary carries its schema and needs no files at run time.
file(GLOB sql_files "${MIGRATIONS_DIR}/*.sql")
list(SORT sql_files)
set(body "")
foreach(path ${sql_files})
  get_filename_component(name ${path} NAME)
  string(REGEX MATCH "^[0-9]+" number ${name})
  math(EXPR version "${number}")
  file(READ ${path} sql)
  string(APPEND body "    {${version}, \"${name}\", R\"wsched_sql(${sql})wsched_sql\"},\n")
endforeach()
file(WRITE ${OUTPUT}.tmp
"// Generated from migrations/*.sql by embed_migrations.cmake. Do not edit.
#include \"server/store/migrations.h\"

namespace wsched::store {

const std::vector<Migration>& EmbeddedMigrations() {
  static const auto* migrations = new std::vector<Migration>{
${body}  };
  return *migrations;
}

}  // namespace wsched::store
")
file(COPY_FILE ${OUTPUT}.tmp ${OUTPUT} ONLY_IF_DIFFERENT)
