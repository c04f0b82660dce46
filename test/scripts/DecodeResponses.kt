// test/scripts/models.test.ts compiles this with the Gson flavour of `npm run models` and runs it on the answers it
// collected: each is decoded as an app would (Gson, the generated class), then reported as the app holds it, encoded
// again from the decoded object, with the properties Kotlin declares non-null that Gson left null and the enum
// values read as Unknown; each date string is parsed with the java.time type docs/mobile.md names for its kind.
// Input (args[0], JSON): { "package", "answers": [{ "name", "type", "body" }], "dates": [{ "kind", "value" }] }.
import com.google.gson.GsonBuilder
import com.google.gson.JsonArray
import com.google.gson.JsonObject
import com.google.gson.JsonParser
import com.google.gson.annotations.SerializedName
import java.io.File
import java.time.LocalDate
import java.time.LocalDateTime
import java.time.OffsetDateTime
import kotlin.reflect.full.memberProperties
import kotlin.reflect.jvm.javaField

/** What Gson let through that the Kotlin types promise against, under `path` (JSON Pointer of wire names). */
fun problems(value: Any?, path: String, found: MutableList<String>) {
    when (value) {
        null, is String, is Number, is Boolean, is Map<*, *> -> return
        is Enum<*> -> if (value.name == "Unknown") found += "$path: a value the models do not know"
        is List<*> -> value.forEachIndexed { i, item -> problems(item, "$path/$i", found) }
        else -> for (property in value::class.memberProperties) {
            val wire = property.javaField?.getAnnotation(SerializedName::class.java)?.value ?: property.name
            val item = property.getter.call(value)
            if (item == null && !property.returnType.isMarkedNullable) found += "$path/$wire: null in a non-null property"
            problems(item, "$path/$wire", found)
        }
    }
}

fun parse(kind: String, text: String): Any = when (kind) {
    "date" -> LocalDate.parse(text)
    "date-time" -> OffsetDateTime.parse(text)
    "local-date-time" -> LocalDateTime.parse(text)
    else -> throw IllegalArgumentException("no java.time type for the kind $kind")
}

fun main(args: Array<String>) {
    val input = JsonParser.parseString(File(args[0]).readText(Charsets.UTF_8)).asJsonObject
    val pkg = input["package"].asString
    val gson = GsonBuilder().serializeNulls().disableHtmlEscaping().create()
    val answers = JsonArray()
    for (element in input["answers"].asJsonArray) {
        val answer = element.asJsonObject
        val decoded: Any = gson.fromJson(answer["body"], Class.forName("$pkg.${answer["type"].asString}"))
        val found = mutableListOf<String>()
        problems(decoded, "", found)
        answers.add(JsonObject().apply {
            addProperty("name", answer["name"].asString)
            add("encoded", gson.toJsonTree(decoded))
            add("problems", JsonArray().apply { found.forEach { add(it) } })
        })
    }
    val dates = JsonArray()
    for (element in input["dates"].asJsonArray) {
        val date = element.asJsonObject
        val error = runCatching { parse(date["kind"].asString, date["value"].asString) }.exceptionOrNull()
        dates.add(JsonObject().apply {
            add("kind", date["kind"])
            add("value", date["value"])
            addProperty("error", error?.let { "${it.javaClass.simpleName}: ${it.message}" })
        })
    }
    print(gson.toJson(JsonObject().apply { add("answers", answers); add("dates", dates) }))
}
